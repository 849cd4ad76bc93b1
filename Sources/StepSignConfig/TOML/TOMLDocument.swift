/// A parsed TOML document: the root table, where every value remembers its line.
///
/// stepsign's config reader is strict and supports the subset a config file needs:
///
/// - comments, `[table]` and `[a.b]` headers, bare, quoted and dotted keys;
/// - arrays of tables at the top level (`[[witness]]`: an array of one table per header);
/// - basic strings `"..."` with the escapes `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`,
///   and literal strings `'...'`;
/// - integers: decimal with an optional sign and `_` between digits, `0x` hex, `0o` octal
///   and `0b` binary; simple decimal floats (`1.5`, `-2e3`);
/// - booleans;
/// - arrays, which may span lines, hold comments and end with a trailing comma.
///
/// It refuses, naming the line: duplicate keys and tables, and, as "not supported by
/// stepsign's config reader", multi-line strings, inline tables, dotted arrays of tables
/// (`[[a.b]]`) and tables inside them, dates and times, and `inf`/`nan`.
public struct TOMLDocument: Sendable, Equatable {
    /// The top-level table.
    public var root: TOMLTable

    public init(root: TOMLTable) {
        self.root = root
    }

    /// Parses `text`, or throws the first problem found.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLDocument {
        var parser = TOMLParser(text)
        return TOMLDocument(root: try parser.parseDocument())
    }
}
