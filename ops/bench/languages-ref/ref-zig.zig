// Definitions of Zig files, for ops/bench/languages.py: the Zig compiler's
// own parser (std.zig.Ast, from the `ziglang` PyPI package's standard
// library), nothing shared with sno's tree-sitter grammar.
//
// Usage: ref-zig ROOT FILE...   (built by languages.sh with the `ziglang`
// package's `zig build-exe`)
// Prints one JSON object per line: {"path", "name", "line", "kind"}:
// every `fn` with a body (function), and every `const X = struct/opaque`
// (struct), at any depth (a generic type's returned struct included).
// Enums and unions are left out, as they are for every other language.
const std = @import("std");
const Ast = std.zig.Ast;

pub fn main(init: std.process.Init) !void {
    const arena = init.arena.allocator();
    const gpa = init.gpa;
    const io = init.io;
    const args = try init.minimal.args.toSlice(arena);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    const root = args[1];
    for (args[2..]) |path| {
        const full = try std.fs.path.join(arena, &.{ root, path });
        const source = std.Io.Dir.cwd().readFileAllocOptions(io, full, gpa, .limited(std.math.maxInt(u32)), .@"1", 0) catch |err| {
            std.debug.print("{s}: {s}\n", .{ path, @errorName(err) });
            continue;
        };
        defer gpa.free(source);
        var tree = try Ast.parse(gpa, source, .{});
        defer tree.deinit(gpa);
        if (tree.errors.len != 0) std.debug.print("{s}: {d} parse errors\n", .{ path, tree.errors.len });
        const n = tree.nodes.len;
        var i: u32 = 1;
        while (i < n) : (i += 1) {
            const node: Ast.Node.Index = @enumFromInt(i);
            switch (tree.nodeTag(node)) {
                .fn_decl => {
                    var buf: [1]Ast.Node.Index = undefined;
                    const proto = tree.fullFnProto(&buf, node) orelse continue;
                    const tok = proto.name_token orelse continue;
                    try emit(&out.writer, &tree, path, tok, "function");
                },
                .global_var_decl, .local_var_decl, .simple_var_decl, .aligned_var_decl => {
                    const decl = tree.fullVarDecl(node) orelse continue;
                    const init_node = decl.ast.init_node.unwrap() orelse continue;
                    var buf: [2]Ast.Node.Index = undefined;
                    const c = tree.fullContainerDecl(&buf, init_node) orelse continue;
                    const kw = tree.tokenSlice(c.ast.main_token);
                    if (std.mem.eql(u8, kw, "struct") or std.mem.eql(u8, kw, "opaque"))
                        try emit(&out.writer, &tree, path, decl.ast.mut_token + 1, "struct");
                },
                else => {},
            }
        }
    }
    try std.Io.File.stdout().writeStreamingAll(io, out.written());
}

fn emit(w: *std.Io.Writer, tree: *const Ast, path: []const u8, tok: Ast.TokenIndex, kind: []const u8) !void {
    var name = tree.tokenSlice(tok);
    if (std.mem.startsWith(u8, name, "@\"")) name = name[2 .. name.len - 1];
    const line = tree.tokenLocation(0, tok).line + 1;
    try w.print("{{\"path\": \"{s}\", \"name\": \"{s}\", \"line\": {d}, \"kind\": \"{s}\"}}\n", .{ path, name, line, kind });
}
