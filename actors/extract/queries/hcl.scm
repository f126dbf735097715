; sno's tags query for hcl (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(block (identifier) @kind (string_lit) (string_lit (template_literal) @name) (#any-of? @kind "resource" "data")) @definition.struct
(block (identifier) @kind (string_lit (template_literal) @name) (#any-of? @kind "variable" "output" "module" "provider" "locals")) @definition.variable
