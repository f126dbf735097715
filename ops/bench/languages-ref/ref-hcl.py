#!/usr/bin/env python3
"""Definitions of HCL (Terraform) files, for ops/bench/languages.py: the
`python-hcl2` package's Lark grammar of HCL2, nothing shared with sno's
tree-sitter grammar.

Usage: ref-hcl.py ROOT FILE...
Prints one JSON object per line: {"path", "name", "line", "kind"}, for the
top-level blocks Terraform names: `resource` and `data` by their second label
(the name; the first is the type), kind struct; `variable`, `output`,
`module` and `provider` by their label, kind variable. `terraform`,
`locals` and nested blocks have no name of their own and are left out.
"""
import json
import os
import sys

import hcl2

TYPED = {"resource", "data"}
NAMED = {"variable", "output", "module", "provider"}


def label(node):
    """The text of a block label (a quoted string or a bare identifier)."""
    if node.data == "identifier":
        return str(node.children[0])
    parts = [v for v in node.scan_values(lambda v: True) if v.type != "DBLQUOTE"]
    return "".join(str(p) for p in parts)


def main():
    root, files = sys.argv[1], sys.argv[2:]
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as fh:
            text = fh.read()
        try:
            tree = hcl2.parses_to_tree(text)
        except Exception as e:  # a file the grammar rejects is reported, not counted
            print(f"{path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
            continue
        body = tree.children[0] if tree.children else None
        if getattr(body, "data", None) != "body":
            continue
        for block in body.children:
            if getattr(block, "data", None) != "block":
                continue
            kids = [c for c in block.children if hasattr(c, "data")]
            kw = str(kids[0].children[0])
            labels = [label(c) for c in kids[1:] if c.data in ("string", "identifier")]
            if kw in TYPED and len(labels) >= 2:
                name, kind, at = labels[1], "struct", kids[2]
            elif kw in NAMED and labels:
                name, kind, at = labels[0], "variable", kids[1]
            else:
                continue
            print(json.dumps({"path": path, "name": name, "line": at.meta.line, "kind": kind}))


if __name__ == "__main__":
    main()
