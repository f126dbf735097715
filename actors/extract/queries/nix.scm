; sno's tags query for nix (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(binding attrpath: (attrpath attr: (identifier) @name .) expression: (function_expression)) @definition.function
(apply_expression function: [(variable_expression name: (identifier) @name) (select_expression expression: (_) @receiver attrpath: (attrpath attr: (identifier) @name .))]) @reference.call
