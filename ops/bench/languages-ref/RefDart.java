// Definitions of Dart files, for ops/bench/languages.py: the ANTLR grammar of
// the Dart language specification from antlr/grammars-v4 (dart2/, Ken Domino's
// scrape of dartLangSpec.tex), generated for Java by the ANTLR 4 tool
// (Debian's antlr4 package); nothing shared with sno's tree-sitter grammar.
//
// Usage: java -cp antlr4-runtime.jar:CLASSES RefDart ROOT FILE...
// Prints one JSON object per line: {"path", "name", "line", "kind"}:
// classes, mixins and extensions (class), functions (top-level and local),
// methods, getters and setters (method), constructors (a named constructor
// as `Class.name`). Enums, fields, operators and typedefs are left out.
// A file with syntax errors is named on stderr; what the parser recovered
// from it is still printed. The grammar is Dart 2.15's: Dart 3's class
// modifiers, records and patterns, and super parameters (`super.key`), are
// syntax errors to it.
import java.nio.file.*;
import java.util.*;
import org.antlr.v4.runtime.*;
import org.antlr.v4.runtime.tree.*;

public class RefDart extends Dart2ParserBaseListener {
    private final String path;
    private RefDart(String path) { this.path = path; }

    private static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private void emit(ParserRuleContext name, String text, String kind) {
        if (name == null) return;
        System.out.println("{\"path\": \"" + esc(path) + "\", \"name\": \"" + esc(text)
            + "\", \"line\": " + name.getStart().getLine() + ", \"kind\": \"" + kind + "\"}");
    }

    private static boolean under(ParserRuleContext c, Class<?>... kinds) {
        for (ParserRuleContext p = c.getParent(); p != null; p = p.getParent()) {
            for (Class<?> k : kinds) if (k.isInstance(p)) return true;
        }
        return false;
    }

    // A method is a signature inside a class, mixin or extension body.
    private String fnKind(ParserRuleContext c) {
        boolean member = c.getParent() instanceof Dart2Parser.MethodSignatureContext
            || c.getParent() instanceof Dart2Parser.DeclarationContext;
        return member && under(c, Dart2Parser.ClassMemberDeclarationContext.class) ? "method" : "function";
    }

    @Override public void enterClassDeclaration(Dart2Parser.ClassDeclarationContext c) {
        ParserRuleContext t = c.typeIdentifier();
        if (t == null && c.mixinApplicationClass() != null) t = c.mixinApplicationClass().identifier();
        if (t != null) emit(t, t.getText(), "class");
    }
    @Override public void enterMixinDeclaration(Dart2Parser.MixinDeclarationContext c) {
        emit(c.typeIdentifier(), c.typeIdentifier().getText(), "class");
    }
    @Override public void enterExtensionDeclaration(Dart2Parser.ExtensionDeclarationContext c) {
        if (c.identifier() != null) emit(c.identifier(), c.identifier().getText(), "class");
    }
    @Override public void enterFunctionSignature(Dart2Parser.FunctionSignatureContext c) {
        // Only a signature that declares something: not one inside a type.
        ParserRuleContext p = c.getParent();
        if (p instanceof Dart2Parser.MethodSignatureContext || p instanceof Dart2Parser.DeclarationContext
            || p instanceof Dart2Parser.TopLevelDeclarationContext || p instanceof Dart2Parser.LocalFunctionDeclarationContext)
            emit(c.identifier(), c.identifier().getText(), fnKind(c));
    }
    @Override public void enterGetterSignature(Dart2Parser.GetterSignatureContext c) {
        emit(c.identifier(), c.identifier().getText(), fnKind(c));
    }
    @Override public void enterSetterSignature(Dart2Parser.SetterSignatureContext c) {
        emit(c.identifier(), c.identifier().getText(), fnKind(c));
    }
    @Override public void enterConstructorName(Dart2Parser.ConstructorNameContext c) {
        ParserRuleContext p = c.getParent();
        if (p instanceof Dart2Parser.ConstructorSignatureContext || p instanceof Dart2Parser.FactoryConstructorSignatureContext
            || p instanceof Dart2Parser.ConstantConstructorSignatureContext
            || p instanceof Dart2Parser.RedirectingFactoryConstructorSignatureContext) {
            String name = c.typeIdentifier().getText() + (c.identifier() != null ? "." + c.identifier().getText() : "");
            emit(c.typeIdentifier(), name, "constructor");
        }
    }

    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[0]);
        for (int i = 1; i < args.length; i++) {
            String path = args[i];
            // The grammar predates Dart 2.19's unnamed `library;`, and reads
            // a file that has one as an expression: it is shown `library _;`
            // (the same lines).
            String text = new String(Files.readAllBytes(root.resolve(path)), java.nio.charset.StandardCharsets.UTF_8)
                .replaceAll("(?m)^library;", "library _;");
            Dart2Lexer lexer = new Dart2Lexer(CharStreams.fromString(text));
            Dart2Parser parser = new Dart2Parser(new CommonTokenStream(lexer));
            lexer.removeErrorListeners();
            parser.removeErrorListeners();
            final int[] errors = {0};
            final String[] first = {null};
            parser.addErrorListener(new BaseErrorListener() {
                @Override public void syntaxError(Recognizer<?, ?> r, Object o, int line, int col, String msg, RecognitionException e) {
                    if (errors[0]++ == 0) first[0] = line + ":" + col + " " + msg;
                }
            });
            ParseTree tree = parser.compilationUnit();
            if (errors[0] > 0) System.err.println(path + ": " + errors[0] + " syntax errors, first at " + first[0]);
            ParseTreeWalker.DEFAULT.walk(new RefDart(path), tree);
        }
    }
}
