; sno's tags query for haskell (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.function)
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synonym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.class
(class_declarations (signature name: (variable) @name) @definition.method)
(header module: (module) @name) @definition.module
(apply function: [(variable) @name (qualified module: (_) @receiver id: (variable) @name)]) @reference.call
(field name: (field_name (variable) @name)) @definition.field
