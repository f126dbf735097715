; sno's tags query for elixir (the generic tier; see actors/extract/src/lang/generic.rs
; for the captures: @definition.KIND with @name, @reference.call with @name and
; an optional @receiver).
(call target: (identifier) @kind (arguments [(alias) @name (call target: (identifier) @name)])
  (#any-of? @kind "defmodule" "defprotocol" "defimpl")) @definition.module
(call target: (identifier) @kind
  (arguments [(identifier) @name
              (call target: (identifier) @name)
              (binary_operator left: (call target: (identifier) @name) operator: "when")])
  (#any-of? @kind "def" "defp" "defdelegate" "defguard" "defguardp" "defn" "defnp")) @definition.function
(call target: (identifier) @kind
  (arguments [(identifier) @name
              (call target: (identifier) @name)
              (binary_operator left: (call target: (identifier) @name) operator: "when")])
  (#any-of? @kind "defmacro" "defmacrop")) @definition.macro
(call target: (identifier) @kind (arguments (keywords)?) (#eq? @kind "defstruct")) @definition.struct
(call target: [(identifier) @name (dot left: (_) @receiver right: (identifier) @name)]
  (#not-any-of? @name "def" "defp" "defdelegate" "defguard" "defguardp" "defmacro" "defmacrop" "defmodule" "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import" "require" "use" "defn" "defnp")) @reference.call
