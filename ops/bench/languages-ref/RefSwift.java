// Definitions of Swift files, for ops/bench/languages.py: the ANTLR grammar
// of The Swift Programming Language's reference from antlr/grammars-v4
// (swift/swift5/, with its Java support classes), generated for Java by the
// ANTLR 4 tool (Debian's antlr4 package); nothing shared with sno's
// tree-sitter grammar. The grammar is Swift 5's: it has no `async`, `await`,
// `actor` or macros, and the files using them are reported with their syntax
// errors (what the parser recovered is still printed).
//
// Usage: java -cp antlr4-runtime.jar:CLASSES RefSwift ROOT FILE...
// Prints one JSON object per line: {"path", "name", "line", "kind"}:
// classes (class), structs (struct), protocols (protocol), functions
// (function at top level or inside a function, method in a type, an
// extension or a protocol's requirements), initializers (constructor
// `init`). Enums, extensions themselves, properties, subscripts, deinit and
// operator functions are left out.
import java.nio.file.*;
import org.antlr.v4.runtime.*;
import org.antlr.v4.runtime.tree.*;

public class RefSwift extends Swift5ParserBaseListener {
    private final String path;
    private RefSwift(String path) { this.path = path; }

    private static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private void emit(Token at, String name, String kind) {
        System.out.println("{\"path\": \"" + esc(path) + "\", \"name\": \"" + esc(name.replace("`", ""))
            + "\", \"line\": " + at.getLine() + ", \"kind\": \"" + kind + "\"}");
    }

    // The nearest enclosing function or type body decides method/function.
    private static String fnKind(ParserRuleContext c) {
        for (ParserRuleContext p = c.getParent(); p != null; p = p.getParent()) {
            if (p instanceof Swift5Parser.Function_bodyContext || p instanceof Swift5Parser.Code_blockContext) return "function";
            if (p instanceof Swift5Parser.Class_bodyContext || p instanceof Swift5Parser.Struct_bodyContext
                || p instanceof Swift5Parser.Extension_bodyContext || p instanceof Swift5Parser.Protocol_bodyContext
                || p instanceof Swift5Parser.Union_style_enum_membersContext
                || p instanceof Swift5Parser.Raw_value_style_enum_membersContext) return "method";
        }
        return "function";
    }

    @Override public void enterClass_declaration(Swift5Parser.Class_declarationContext c) {
        emit(c.class_name().getStart(), c.class_name().getText(), "class");
    }
    @Override public void enterStruct_declaration(Swift5Parser.Struct_declarationContext c) {
        emit(c.struct_name().getStart(), c.struct_name().getText(), "struct");
    }
    @Override public void enterProtocol_declaration(Swift5Parser.Protocol_declarationContext c) {
        emit(c.protocol_name().getStart(), c.protocol_name().getText(), "protocol");
    }
    @Override public void enterFunction_declaration(Swift5Parser.Function_declarationContext c) {
        if (c.function_name().identifier() != null)
            emit(c.function_name().getStart(), c.function_name().getText(), fnKind(c));
    }
    @Override public void enterProtocol_method_declaration(Swift5Parser.Protocol_method_declarationContext c) {
        if (c.function_name().identifier() != null)
            emit(c.function_name().getStart(), c.function_name().getText(), "method");
    }
    @Override public void enterInitializer_declaration(Swift5Parser.Initializer_declarationContext c) {
        emit(c.initializer_head().INIT().getSymbol(), "init", "constructor");
    }
    @Override public void enterProtocol_initializer_declaration(Swift5Parser.Protocol_initializer_declarationContext c) {
        emit(c.initializer_head().INIT().getSymbol(), "init", "constructor");
    }

    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[0]);
        for (int i = 1; i < args.length; i++) {
            String path = args[i];
            Swift5Lexer lexer = new Swift5Lexer(CharStreams.fromPath(root.resolve(path)));
            Swift5Parser parser = new Swift5Parser(new CommonTokenStream(lexer));
            lexer.removeErrorListeners();
            parser.removeErrorListeners();
            final int[] errors = {0};
            final String[] first = {null};
            parser.addErrorListener(new BaseErrorListener() {
                @Override public void syntaxError(Recognizer<?, ?> r, Object o, int line, int col, String msg, RecognitionException e) {
                    if (errors[0]++ == 0) first[0] = line + ":" + col + " " + msg;
                }
            });
            ParseTree tree = parser.top_level();
            if (errors[0] > 0) System.err.println(path + ": " + errors[0] + " syntax errors, first at " + first[0]);
            ParseTreeWalker.DEFAULT.walk(new RefSwift(path), tree);
        }
    }
}
