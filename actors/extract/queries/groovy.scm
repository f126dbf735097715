; sno's tags query for groovy (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(function_definition name: (identifier) @name) @definition.function
(method_invocation object: (_)? @receiver name: (identifier) @name) @reference.call
