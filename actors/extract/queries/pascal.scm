; sno's tags query for pascal (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(declType name: (identifier) @name type: (declClass (kClass))) @definition.class
(declType name: (identifier) @name type: (declClass (kRecord))) @definition.struct
(declType name: (identifier) @name type: (declClass (kObject))) @definition.class
(declType name: (identifier) @name type: (declIntf)) @definition.interface
(declType name: (identifier) @name) @definition.type
(defProc header: (declProc name: [(identifier) @name (genericDot rhs: (identifier) @name)])) @definition.function
(declClass (declProc name: (identifier) @name) @definition.method)
(exprCall entity: [(identifier) @name (exprDot rhs: (identifier) @name)]) @reference.call
(statement (identifier) @name) @reference.call
(declSection (declProc name: (identifier) @name) @definition.method)
(declIntf (declProc name: (identifier) @name) @definition.method)
(interface (declProc name: (identifier) @name) @definition.function)
