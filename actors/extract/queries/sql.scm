; sno's tags query for sql (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(create_table (object_reference name: (identifier) @name)) @definition.struct
(create_view (object_reference name: (identifier) @name)) @definition.struct
(create_materialized_view (object_reference name: (identifier) @name)) @definition.struct
(create_function (object_reference name: (identifier) @name)) @definition.function
(create_type (object_reference name: (identifier) @name)) @definition.type
(create_index (identifier) @name) @definition.variable
(create_trigger (object_reference name: (identifier) @name)) @definition.function
(invocation (object_reference name: (identifier) @name)) @reference.call
