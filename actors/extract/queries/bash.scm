; sno's tags query for bash (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(function_definition name: (word) @name) @definition.function
(command name: (command_name (word) @name)) @reference.call
