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

    func freeze() -> TOMLTable {
        var table = TOMLTable(line: line)
        for key in order {
            switch slots[key] {
            case .value(let v)?:
                table.append(.init(key: key, value: v))
            case .table(let t)?:
                table.append(.init(key: key, value: TOMLValue(.table(t.freeze()), line: t.line)))
            case nil:
                break
            }
        }
        return table
    }
}
