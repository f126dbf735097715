; sno's tags query for julia (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(function_definition (signature (call_expression . [(identifier) @name (field_expression (identifier) @name .)]))) @definition.function
(function_definition (signature (where_expression . (call_expression . [(identifier) @name (field_expression (identifier) @name .)])))) @definition.function
(function_definition (signature (typed_expression . (call_expression . [(identifier) @name (field_expression (identifier) @name .)])))) @definition.function
(assignment . (call_expression . [(identifier) @name (field_expression (identifier) @name .)])) @definition.function
(macro_definition (signature (call_expression . (identifier) @name))) @definition.macro
(struct_definition (type_head [(identifier) @name (parametrized_type_expression . (identifier) @name) (binary_expression . [(identifier) @name (parametrized_type_expression . (identifier) @name)])])) @definition.struct
(abstract_definition (type_head [(identifier) @name (parametrized_type_expression . (identifier) @name) (binary_expression . [(identifier) @name (parametrized_type_expression . (identifier) @name)])])) @definition.type
(module_definition name: (identifier) @name) @definition.module
(call_expression . [(identifier) @name (field_expression (identifier) @name .)]) @reference.call
