; sno's tags query for zig (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(function_declaration name: (identifier) @name) @definition.function
(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (union_declaration)) @definition.union
(variable_declaration (identifier) @name (opaque_declaration)) @definition.struct
(test_declaration (string (string_content) @name)) @definition.function
(call_expression function: [(identifier) @name (field_expression object: (_) @receiver member: (identifier) @name)]) @reference.call
