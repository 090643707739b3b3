import ArgumentParser
import Foundation
import ScanCore

/// `scanadmin operators`: the coding desk's operators file (`scanadmin serve --operators-file`).
struct OperatorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "The coding desk's operators: who may sign in to resolve no-reads in the browser.",
        discussion: """
            The file holds one line per operator, NAME:pbkdf2-sha256$ROUNDS$SALT$HASH: no password, only \
            what checks one. The name is what the audit trail keeps as keyed_by. Exit codes: 0 done, 1 the \
            file cannot be read or written, 2 the file is not an operators file, 64 bad usage.
            """,
        subcommands: [SetPassword.self, Remove.self, List.self])

    struct FileOption: ParsableArguments {
        @Option(help: ArgumentHelp("The operators file.", valueName: "FILE")) var file: String

        func load() throws -> OperatorAccounts? {
            guard FileManager.default.fileExists(atPath: file) else { return nil }
            do {
                return try OperatorAccounts.load(path: file)
            } catch {
                printError("scanadmin operators: \(error)")
                throw ExitCode(2)
            }
        }

        /// Writes the accounts (0600, replaced in one rename), sorted by name.
        func save(_ accounts: [OperatorAccounts.Account]) throws {
            let text = accounts.sorted { $0.name < $1.name }.map { $0.line + "\n" }.joined()
            let temporary = file + ".tmp-\(getpid())"
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: Data(text.utf8),
                    attributes: [
                        .posixPermissions: 0o600
                    ]), rename(temporary, file) == 0
            else {
                unlink(temporary)
                printError("scanadmin operators: cannot write \(file)")
                throw ExitCode.failure
            }
        }
    }

    struct SetPassword: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract:
                "Adds an operator, or gives one a new password: asked for on the terminal (not shown), else the first line of standard input."
        )
        @OptionGroup var options: FileOption
        @Argument(help: "The operator's name (letters, digits, . _ -; at most 64).") var name: String

        func validate() throws {
            guard OperatorAccounts.isName(name) else {
                throw ValidationError("'\(name)' is not an operator name: letters, digits, . _ -, at most 64")
            }
        }

        func run() throws {
            let password: String
            if isatty(0) == 1 {
                password = getpass("password for \(name): ").map { String(cString: $0) } ?? ""
            } else {
                password = readLine(strippingNewline: true) ?? ""
            }
            guard password.count >= OperatorAccounts.minimumPasswordLength else {
                throw ValidationError(
                    "the password (the first line of standard input) must be at least \(OperatorAccounts.minimumPasswordLength) characters"
                )
            }
            var accounts = try options.load()?.accounts ?? [:]
            let existed = accounts[name] != nil
            accounts[name] = OperatorAccounts.account(name: name, password: password)
            try options.save(Array(accounts.values))
            print("\(existed ? "changed the password of" : "added") operator \(name) in \(options.file)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Removes an operator (signed-in sessions end at the next restart of serve).")
        @OptionGroup var options: FileOption
        @Argument(help: "The operator's name.") var name: String

        func run() throws {
            guard var accounts = try options.load()?.accounts, accounts.removeValue(forKey: name) != nil else {
                printError("scanadmin operators: no operator \(TerminalText.escaped(name)) in \(options.file)")
                throw ExitCode.failure
            }
            try options.save(Array(accounts.values))
            print("removed operator \(name) from \(options.file)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the operators' names.")
        @OptionGroup var options: FileOption

        func run() throws {
            for name in (try options.load()?.accounts.keys.sorted() ?? []) { print(name) }
        }
    }
}
