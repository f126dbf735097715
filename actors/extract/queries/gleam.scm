; sno's tags query for gleam (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(function name: (identifier) @name) @definition.function
(external_function name: (identifier) @name) @definition.function
(type_definition (type_name name: (type_identifier) @name)) @definition.type
(type_alias (type_name name: (type_identifier) @name)) @definition.type
(constant name: (identifier) @name) @definition.constant
(function_call function: [(identifier) @name (field_access record: (_) @receiver field: (label) @name)]) @reference.call
