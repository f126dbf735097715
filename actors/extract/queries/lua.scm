; sno's tags query for lua (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(function_declaration name: (identifier) @name) @definition.function
(function_declaration name: (dot_index_expression field: (identifier) @name)) @definition.function
(function_declaration name: (method_index_expression method: (identifier) @name)) @definition.method
(assignment_statement
  (variable_list . name: [(identifier) (dot_index_expression field: (identifier))] @name)
  (expression_list . value: (function_definition))) @definition.function
(function_call name: [(identifier) @name
                      (dot_index_expression table: (_) @receiver field: (identifier) @name)
                      (method_index_expression table: (_) @receiver method: (identifier) @name)]) @reference.call
(field name: (identifier) @name value: (function_definition)) @definition.function
