; sno's tags query for solidity (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(contract_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(library_declaration name: (identifier) @name) @definition.module
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(event_definition name: (identifier) @name) @definition.function
(error_declaration name: (identifier) @name) @definition.type
(modifier_definition name: (identifier) @name) @definition.function
(function_definition name: (identifier) @name) @definition.function
(constructor_definition) @definition.constructor
(state_variable_declaration name: (identifier) @name) @definition.field
(user_defined_type_definition name: (identifier) @name) @definition.type
(call_expression function: (expression [(identifier) @name (member_expression object: (_) @receiver property: (identifier) @name)])) @reference.call
