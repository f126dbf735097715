; sno's tags query for r (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(binary_operator lhs: [(identifier) (string)] @name operator: ["<-" "=" "<<-"] rhs: (function_definition)) @definition.function
(binary_operator lhs: (function_definition) operator: "->" rhs: (identifier) @name) @definition.function
(call function: [(identifier) @name (namespace_operator rhs: (identifier) @name)]) @reference.call
