// Definitions of Scala and Solidity files, for ops/bench/languages.py where
// universal-ctags 5.9 has no parser: scalameta (compiled to JavaScript, the
// `scalameta-parsers` package) and the Solidity project's own ANTLR-based
// parser (`@solidity-parser/parser`). Neither shares anything with sno's
// tree-sitter grammars.
//
// Usage: node ref.js scala|solidity ROOT FILE...
// Prints one JSON object per line: {"path", "name", "line", "kind"}, with
// ctags' kind names (function, method, class, interface, struct, trait).
"use strict";
const fs = require("fs");
const path = require("path");

const [lang, root, ...files] = process.argv.slice(2);

function emit(file, name, line, kind) {
  process.stdout.write(JSON.stringify({ path: file, name, line, kind }) + "\n");
}

function lineAt(text, offset) {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// scalameta: classes, traits, objects, and defs (a def inside a template is
// a method, elsewhere a function, as ctags' Scala kinds would have it).
function scala(file, text) {
  const { parseSource } = require("scalameta-parsers");
  // Scala 2.13 first, then Scala 3 (indentation syntax, `given`).
  let tree = parseSource(text);
  if (tree.error) tree = parseSource(text, { dialect: "Scala3" });
  if (tree.error) {
    process.stderr.write(`${file}: ${tree.error}\n`);
    return;
  }
  const walk = (node, inTemplate) => {
    if (Array.isArray(node)) return node.forEach((n) => walk(n, inTemplate));
    if (!node || typeof node !== "object") return;
    const at = (n) => lineAt(text, n.name.pos.start);
    switch (node.type) {
      case "Defn.Class":
        emit(file, node.name.value, at(node), "class");
        break;
      case "Defn.Trait":
        emit(file, node.name.value, at(node), "trait");
        break;
      case "Defn.Object":
        emit(file, node.name.value, at(node), "class");
        break;
      case "Defn.Def":
      case "Decl.Def":
        emit(file, node.name.value, at(node), inTemplate ? "method" : "function");
        break;
    }
    const template = node.type === "Template.Body" ? true : node.type === "Term.Block" ? false : inTemplate;
    for (const [k, v] of Object.entries(node)) if (k !== "pos" && k !== "name") walk(v, template);
  };
  walk(tree, false);
}

// Solidity: contracts (classes), interfaces, structs, functions with a
// name, and modifiers.
function solidity(file, text) {
  const parser = require("@solidity-parser/parser");
  let ast;
  try {
    ast = parser.parse(text, { loc: true, tolerant: true });
  } catch (e) {
    process.stderr.write(`${file}: ${e.message}\n`);
    return;
  }
  parser.visit(ast, {
    ContractDefinition: (n) =>
      n.kind !== "library" && emit(file, n.name, n.loc.start.line, n.kind === "interface" ? "interface" : "class"),
    StructDefinition: (n) => emit(file, n.name, n.loc.start.line, "struct"),
    FunctionDefinition: (n) => n.name && !n.isConstructor && emit(file, n.name, n.loc.start.line, "function"),
    ModifierDefinition: (n) => emit(file, n.name, n.loc.start.line, "function"),
  });
}

const read = { scala, solidity }[lang];
if (!read) {
  process.stderr.write(`ref.js: no reference for ${lang}\n`);
  process.exit(2);
}
for (const f of files) read(f, fs.readFileSync(path.join(root, f), "utf8"));
