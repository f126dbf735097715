; sno's tags query for dart (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(class_declaration name: (identifier) @name) @definition.class
(mixin_declaration (identifier) @name) @definition.class
(extension_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias (type_identifier) @name) @definition.type
(function_declaration signature: (function_signature name: (identifier) @name)) @definition.function
(method_declaration signature: (method_signature [(function_signature name: (identifier) @name)
                                                  (getter_signature name: (identifier) @name)
                                                  (setter_signature name: (identifier) @name)])) @definition.method
(declaration (constructor_signature name: (identifier) @name)) @definition.constructor
(method_declaration signature: (method_signature (constructor_signature name: (identifier) @name))) @definition.constructor
(declaration (function_signature name: (identifier) @name)) @definition.method
(call_expression function: [(identifier) @name (member_expression object: (_) @receiver property: (identifier) @name)]) @reference.call
