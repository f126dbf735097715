; sno's tags query for ocaml (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(let_binding pattern: (value_name) @name (parameter)) @definition.function
(let_binding pattern: (value_name) @name body: [(fun_expression) (function_expression)]) @definition.function
(let_binding pattern: (value_name) @name) @definition.variable
(type_definition (type_binding name: (type_constructor) @name)) @definition.type
(module_definition (module_binding (module_name) @name)) @definition.module
(module_type_definition (module_type_name) @name) @definition.interface
(class_definition (class_binding (class_name) @name)) @definition.class
(method_definition (method_name) @name) @definition.method
(exception_definition (constructor_declaration (constructor_name) @name)) @definition.type
(external (value_name) @name) @definition.function
(application_expression function: (value_path (value_name) @name)) @reference.call
