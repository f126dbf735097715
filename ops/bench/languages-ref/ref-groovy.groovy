// Definitions of Groovy files, for ops/bench/languages.py: the Groovy
// compiler's own parser (Groovy 4's Parrot grammar, the groovy-4 jar that the
// `npm-groovy-lint` package ships), nothing shared with sno's tree-sitter
// grammar. Each file is compiled to the CONVERSION phase (parsed into the
// compiler's AST, nothing resolved).
//
// Usage: java -cp groovy-4.jar groovy.ui.GroovyMain ref-groovy.groovy ROOT FILE...
// Prints one JSON object per line: {"path", "name", "line", "kind"}:
// classes, interfaces and traits (enums and annotation types left out, as
// for every language), their methods and constructors (an anonymous class's
// methods too, not the class), and a script's methods (functions). The class the compiler makes of a script, its
// run/main and whatever the compiler generates (no line) are not counted.
import org.codehaus.groovy.control.*
import org.codehaus.groovy.ast.*
import groovy.json.JsonOutput

def root = new File(args[0])
def emit = { String path, String name, int line, String kind ->
    if (line > 0) println JsonOutput.toJson([path: path, name: name, line: line, kind: kind])
}
for (path in args.drop(1)) {
    def cu = new CompilationUnit()
    cu.addSource(new File(root, path))
    try {
        cu.compile(Phases.CONVERSION)
    } catch (Throwable e) {
        System.err.println("${path}: ${e.message?.readLines()?.take(2)?.join(' ')}")
        continue
    }
    for (ClassNode c in cu.AST.classes) {
        if (c.isEnum() || c.isAnnotationDefinition()) continue
        boolean script = c.isScript()
        if (!script && !(c instanceof InnerClassNode && ((InnerClassNode) c).isAnonymous())) {
            String kind = c.isInterface() ? "interface" :
                c.annotations.any { it.classNode.name in ["groovy.transform.Trait", "Trait"] } ? "trait" : "class"
            emit(path, c.nameWithoutPackage.tokenize('$').last(), c.lineNumber, kind)
        }
        for (MethodNode m in c.methods) {
            if (script && m.name in ["run", "main"] && m.lineNumber < 0) continue
            emit(path, m.name, m.lineNumber, script ? "function" : "method")
        }
        for (ConstructorNode m in c.declaredConstructors) emit(path, c.nameWithoutPackage.tokenize('$').last(), m.lineNumber, "constructor")
    }
}
