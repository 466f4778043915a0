import ArgumentParser

/// "did you mean" for a command name typed wrong: `streamcache gte URL` names no command, and
/// `get` is one or two keystrokes away.
enum CommandSuggestion {
    /// The line to say for `arguments` when a word where a command name goes names none:
    /// `unknown command 'gte'; did you mean 'get'?`; `nil` when the words name commands (or an
    /// option comes first).
    static func unknownCommand(
        in arguments: [String],
        root: ParsableCommand.Type = StreamCacheCommand.self
    ) -> String? {
        var commands = root.configuration.subcommands
        var path = [root.configuration.commandName ?? "streamcache"]
        for argument in arguments {
            // argument-parser's own `help` command reads the names after it.
            guard !commands.isEmpty, !argument.hasPrefix("-"), argument != "help" else { return nil }
            let names = commands.map(name)
            guard let index = commands.firstIndex(where: { answers($0, to: argument) }) else {
                let nearest = names.map { ($0, distance($0, argument)) }.min { $0.1 < $1.1 }
                let suggestion = nearest.flatMap { $0.1 <= 2 ? "; did you mean '\($0.0)'?" : nil } ?? ""
                let help = (path + ["--help"]).joined(separator: " ")
                return "unknown command '\(argument.prefix(40))'\(suggestion) (see '\(help)')"
            }
            path.append(argument)
            commands = commands[index].configuration.subcommands
        }
        return nil
    }

    private static func name(_ command: ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// Whether `word` names `command`: its name or one of its aliases (`hls` for `packages`).
    static func answers(_ command: ParsableCommand.Type, to word: String) -> Bool {
        name(command) == word || command.configuration.aliases.contains(word)
    }

    /// The edit distance (insertions, deletions, substitutions and swaps of neighbours) between
    /// `a` and `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var rows = [Array(0...b.count)]
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], rows[i - 2][j - 2] + 1)
                }
            }
            rows.append(row)
        }
        return rows[a.count][b.count]
    }
}
