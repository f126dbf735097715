; sno's tags query for elm (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(value_declaration (function_declaration_left . (lower_case_identifier) @name)) @definition.function
(type_declaration name: (upper_case_identifier) @name) @definition.type
(type_alias_declaration name: (upper_case_identifier) @name) @definition.type
(port_annotation name: (lower_case_identifier) @name) @definition.function
(module_declaration name: (upper_case_qid) @name) @definition.module
(function_call_expr target: (value_expr name: (value_qid (lower_case_identifier) @name .))) @reference.call
