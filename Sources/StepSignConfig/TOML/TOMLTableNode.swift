/// A table while it is being built; frozen into a `TOMLTable` at the end.
final class TOMLTableNode {
    enum Origin {
        /// Defined by its own `[header]`.
        case header
        /// Created as the parent of a header, e.g. `a` by `[a.b]`; may still get a header.
        case implicit
        /// Created by a dotted key, e.g. `a` by `a.b = 1`.
        case dotted
    }

    enum Slot {
        case value(TOMLValue)
        case table(TOMLTableNode)
        /// An array of tables (`[[key]]`), one table per header, in order.
        case tables([TOMLTableNode])
    }

    var origin: Origin
    var line: Int
    private var order: [String] = []
    private var slots: [String: Slot] = [:]

    init(origin: Origin, line: Int) {
        self.origin = origin
        self.line = line
    }

    func slot(_ key: String) -> Slot? { slots[key] }

    func add(_ key: String, _ slot: Slot) {
        order.append(key)
        slots[key] = slot
    }

    /// Appends `table` to the array of tables `key` (made by the first `[[key]]`).
    func appendTable(_ table: TOMLTableNode, to key: String) {
        guard case .tables(let tables)? = slots[key] else {
            add(key, .tables([table]))
            return
        }
        slots[key] = .tables(tables + [table])
    }

    func freeze() -> TOMLTable {
        var table = TOMLTable(line: line)
        for key in order {
            switch slots[key] {
            case .value(let v)?:
                table.append(.init(key: key, value: v))
            case .table(let t)?:
                table.append(.init(key: key, value: TOMLValue(.table(t.freeze()), line: t.line)))
            case .tables(let tables)?:
                let values = tables.map { TOMLValue(.table($0.freeze()), line: $0.line) }
                table.append(.init(key: key, value: TOMLValue(.array(values), line: tables.first?.line ?? line)))
            case nil:
                break
            }
        }
        return table
    }
}
