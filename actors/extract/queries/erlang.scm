; sno's tags query for erlang (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(fun_decl clause: (function_clause name: (atom) @name)) @definition.function
(module_attribute name: (atom) @name) @definition.module
(record_decl name: (atom) @name) @definition.struct
(type_alias name: (type_name name: (atom) @name)) @definition.type
(opaque name: (type_name name: (atom) @name)) @definition.type
(pp_define lhs: (macro_lhs name: (_) @name)) @definition.macro
(call expr: (atom) @name) @reference.call
(remote module: (remote_module module: (_) @receiver) fun: (call expr: (atom) @name) @reference.call)
