import Testing
@testable import StepSignConfig

@Suite("TOML reader")
struct TOMLDocumentTests {
    private func parse(_ text: String) throws -> TOMLTable {
        try TOMLDocument.parse(text).root
    }

    private func failure(_ text: String) -> TOMLError? {
        do {
            _ = try TOMLDocument.parse(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Supported constructs

    @Test func commentsAndBlankLinesAreIgnored() throws {
        let root = try parse("# heading\n\n  # indented\na = 1 # trailing\n\r\nb = 2\r\n")
        #expect(root.keys == ["a", "b"])
        #expect(root["b"]?.line == 6)
    }

    @Test func tableHeadersNestTablesAndRememberTheirLine() throws {
        let root = try parse("top = 1\n[server]\nsocket = \"/s\"\n\n[password.policy]\nminL = 8\n")
        #expect(root["server"]?.table?["socket"]?.string == "/s")
        #expect(root["server"]?.line == 2)
        let policy = try #require(root["password"]?.table?["policy"])
        #expect(policy.line == 5)
        #expect(policy.table?["minL"]?.integer == 8)
        #expect(policy.table?["minL"]?.line == 6)
    }

    @Test func anImplicitParentTableMayBeDefinedLater() throws {
        let root = try parse("[a.b]\nx = 1\n[a]\ny = 2\n")
        #expect(root["a"]?.table?["y"]?.integer == 2)
        #expect(root["a"]?.table?["b"]?.table?["x"]?.integer == 1)
    }

    @Test func bareQuotedAndLiteralKeys() throws {
        let root = try parse("bare-key_1 = 1\n\"quoted key\" = 2\n'literal.key' = 3\n")
        #expect(root.keys == ["bare-key_1", "quoted key", "literal.key"])
    }

    @Test func dottedKeysCreateTables() throws {
        let root = try parse("a.b.c = 1\na . b . d = 2\n")
        #expect(root["a"]?.table?["b"]?.table?["c"]?.integer == 1)
        #expect(root["a"]?.table?["b"]?.table?["d"]?.integer == 2)
    }

    @Test func basicStringsUnderstandEscapes() throws {
        let root = try parse(#"s = "q\" b\\ n\n t\t u\u00e9 U\U0001F600""#)
        #expect(root["s"]?.string == "q\" b\\ n\n t\t u\u{e9} U\u{1F600}")
    }

    @Test func literalStringsTakeBackslashesLiterally() throws {
        let root = try parse(#"p = 'C:\path\n "x"'"#)
        #expect(root["p"]?.string == #"C:\path\n "x""#)
    }

    @Test func decimalIntegersWithSignsAndSeparators() throws {
        let root = try parse("a = 42\nb = -17\nc = +3\nd = 1_000_000\ne = 0\n")
        #expect(root["a"]?.integer == 42)
        #expect(root["b"]?.integer == -17)
        #expect(root["c"]?.integer == 3)
        #expect(root["d"]?.integer == 1_000_000)
        #expect(root["e"]?.integer == 0)
    }

    @Test func hexOctalAndBinaryIntegers() throws {
        let root = try parse("h = 0xFF_ff\no = 0o660\nb = 0b1010\n")
        #expect(root["h"]?.integer == 0xFFFF)
        #expect(root["o"]?.integer == 0o660)
        #expect(root["b"]?.integer == 10)
    }

    @Test func simpleFloats() throws {
        let root = try parse("a = 1.5\nb = -2e3\nc = 6.25E-2\n")
        #expect(root["a"]?.kind == .float(1.5))
        #expect(root["b"]?.kind == .float(-2000))
        #expect(root["c"]?.kind == .float(0.0625))
    }

    @Test func booleans() throws {
        let root = try parse("t = true\nf = false\n")
        #expect(root["t"]?.boolean == true)
        #expect(root["f"]?.boolean == false)
    }

    @Test func arraysMaySpanLinesHoldCommentsAndEndWithAComma() throws {
        let root = try parse("""
            empty = []
            ints = [1, 2, 3]
            names = [
              "a",   # first
              'b',
              # nothing here
            ]
            after = 1
            """)
        #expect(root["empty"]?.array == [])
        #expect(root["ints"]?.array?.compactMap(\.integer) == [1, 2, 3])
        let names = try #require(root["names"]?.array)
        #expect(names.compactMap(\.string) == ["a", "b"])
        #expect(names.map(\.line) == [4, 5])
        #expect(root["names"]?.line == 3)
        #expect(root["after"]?.line == 8)
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let root = try parse("\u{FEFF}a = 1\n")
        #expect(root["a"]?.integer == 1)
    }

    // MARK: Errors name the line

    @Test func duplicateKeyIsRefusedOnTheSecondLine() throws {
        let error = try #require(failure("a = 1\nb = 2\na = 3\n"))
        #expect(error.reason == .duplicate)
        #expect(error.line == 3)
        #expect(error.message.contains("already defined on line 1"))
    }

    @Test func duplicateKeyInATableNamesTheDottedKey() throws {
        let error = try #require(failure("[server]\nsocket = \"a\"\nsocket = \"b\"\n"))
        #expect(error.line == 3)
        #expect(error.message.contains("server.socket"))
    }

    @Test func duplicateTableIsRefused() throws {
        let error = try #require(failure("[log]\nlevel = \"info\"\n\n[log]\n"))
        #expect(error.reason == .duplicate)
        #expect(error.line == 4)
        #expect(error.message.contains("[log]"))
    }

    @Test func aKeyCannotAlsoBeATable() throws {
        let error = try #require(failure("server = 1\n[server]\n"))
        #expect(error.reason == .duplicate)
        #expect(error.line == 2)
    }

    @Test func dottedKeysCannotExtendAHeaderTable() throws {
        let error = try #require(failure("[a.b]\nx = 1\n[a]\nb.y = 2\n"))
        #expect(error.reason == .duplicate)
        #expect(error.line == 4)
    }

    @Test("every way to define a name twice, with its line, column and message", arguments: [
        ("a = 1\n[a]\n", 2, 1, "a is already defined as a value on line 1"),
        ("[a]\n[a]\n", 2, 1, "table [a] is already defined on line 1"),
        ("a.b = 1\n[a]\n", 2, 1, "table [a] is already defined on line 1"),
        ("a = 1\na.b = 2\n", 2, 1, "a is already defined as a value on line 1"),
        ("[a.b]\nc = 1\n[a]\n  b.d = 2\n", 4, 3, "table [a.b] is already defined on line 1; it cannot be extended with dotted keys"),
        ("a = 1\na = 2\n", 2, 1, "duplicate key a: already defined on line 1"),
        ("[a.b]\n[a]\nb = 1\n", 3, 1, "duplicate key a.b: already defined as a table on line 1"),
        ("[x]\n\"a b\".c = 1\n\"a b\" = 2\n", 3, 1, "duplicate key x.\"a b\": already defined as a table on line 2"),
    ])
    func everyDuplicate(text: String, line: Int, column: Int, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.reason == .duplicate)
        #expect(error.line == line && error.column == column, "\(error.line):\(error.column)")
        #expect(error.message == message)
    }

    @Test("a parent made by an earlier header may still get its own header, once")
    func implicitParentGetsItsHeader() throws {
        #expect(failure("[a.b]\nx = 1\n[a]\ny = 2\n") == nil)
        #expect(failure("[a.b]\n[a]\n[a]\n")?.line == 3)
    }

    @Test func unterminatedStringNamesItsLine() throws {
        let error = try #require(failure("a = 1\nb = \"open\nc = 2\n"))
        #expect(error.reason == .syntax)
        #expect(error.line == 2)
        #expect(error.message.contains("unterminated string"))
    }

    @Test func unterminatedArrayNamesTheLineItStarts() throws {
        let error = try #require(failure("a = 1\nb = [1,\n2\n"))
        #expect(error.line == 2)
        #expect(error.message.contains("unterminated array"))
    }

    @Test func missingCommaInAnArray() throws {
        let error = try #require(failure("b = [\n1\n2]\n"))
        #expect(error.line == 3)
    }

    @Test func invalidEscapeIsRefused() throws {
        let error = try #require(failure("\n\ns = \"a\\qb\"\n"))
        #expect(error.line == 3)
        #expect(error.message.contains("invalid escape"))
    }

    @Test func bareWordValueIsRefused() throws {
        let error = try #require(failure("a = 1\nlevel = info\n"))
        #expect(error.line == 2)
        #expect(error.message.contains("quoted"))
    }

    @Test func leadingZerosAreRefused() throws {
        let error = try #require(failure("mode = 0660\n"))
        #expect(error.line == 1)
        #expect(error.message.contains("leading zeros"))
    }

    @Test func integerOverflowIsRefused() throws {
        let error = try #require(failure("n = 9223372036854775808\n"))
        #expect(error.message.contains("out of range"))
    }

    @Test func misplacedUnderscoreIsRefused() throws {
        #expect(failure("n = 1__0\n") != nil)
        #expect(failure("n = _1\n") != nil)
        #expect(failure("n = 1_\n") != nil)
    }

    @Test func textAfterAValueIsRefused() throws {
        let error = try #require(failure("a = 1 2\n"))
        #expect(error.line == 1)
        #expect(error.message.contains("end of the line"))
    }

    @Test func missingEqualsIsRefused() throws {
        let error = try #require(failure("\nkey \"v\"\n"))
        #expect(error.line == 2)
    }

    @Test func missingValueIsRefused() throws {
        let error = try #require(failure("a =\n"))
        #expect(error.line == 1)
        #expect(error.message.contains("expected a value"))
    }

    @Test func unclosedHeaderIsRefused() throws {
        let error = try #require(failure("a = 1\n[server\n"))
        #expect(error.line == 2)
    }

    @Test func controlCharacterInAStringIsRefused() throws {
        let error = try #require(failure("s = \"a\u{01}b\"\n"))
        #expect(error.message.contains("U+0001"))
    }

    // MARK: Unsupported constructs are named

    @Test(arguments: [
        ("s = \"\"\"\nmulti\n\"\"\"\n", "multi-line strings"),
        ("s = '''\nmulti\n'''\n", "multi-line strings"),
        ("t = { a = 1 }\n", "inline tables"),
        ("[[a.b]]\nname = \"a\"\n", "arrays of tables are supported at the top level only"),
        ("d = 1979-05-27\n", "dates and times"),
        ("t = 07:32:00\n", "dates and times"),
        ("f = inf\n", "inf"),
        ("f = -nan\n", "nan"),
    ])
    func unsupportedConstructIsNamed(text: String, construct: String) throws {
        let error = try #require(failure("ok = 1\n" + text))
        #expect(error.reason == .unsupported)
        #expect(error.line == 2)
        #expect(error.message.contains(construct))
        #expect(error.message.contains("not supported by stepsign's config reader") || construct.contains("arrays of tables"))
    }

    // MARK: Arrays of tables ([[witness]], [[approval]])

    @Test func arraysOfTablesAreOneTableEachInOrderWithTheirLines() throws {
        let root = try TOMLDocument.parse("""
            a = 1
            [[witness]]
            name = "w1"
            [server]
            x = 2
            [[witness]]
            name = "w2"
            key.id = 3
            """).root
        let witnesses = try #require(root["witness"]?.array)
        #expect(witnesses.count == 2)
        #expect(witnesses.map(\.line) == [2, 6])
        #expect(witnesses.map { $0.table?["name"]?.string } == ["w1", "w2"])
        #expect(witnesses[1].table?["key"]?.table?["id"]?.integer == 3)
        #expect(root["server"]?.table?["x"]?.integer == 2)
    }

    @Test(arguments: [
        ("witness = 1\n[[witness]]\n", "already defined as a value"),
        ("[witness]\n[[witness]]\n", "already defined as a table"),
        ("[[witness]]\n[witness]\n", "array of tables"),
        ("[[witness]]\n[witness.sub]\n", "array of tables"),
        ("[[witness]\n", "]]"),
        ("[[witness]]\nname = 1\nname = 2\n", "duplicate key"),
    ])
    func badArraysOfTablesAreRefused(text: String, message: String) throws {
        let error = try #require(failure(text))
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func errorDescriptionNamesLineAndColumn() throws {
        let error = try #require(failure("a = 1\n  b = ?\n"))
        #expect(error.description == "line 2, column 7: expected a value, found \"?\"")
    }
}
