import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct User: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage accounts.",
        subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an account, or reset the password and role of an existing one.",
            discussion: """
                The password is read from standard input, never from the command line (where other \
                users of the machine could see it): typed twice without echo on a terminal, or the \
                first line of piped input, e.g. `printf '%s\\n' "$PASSWORD" | coasterlife user create ann --admin`.
                """)

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "Username: 3–32 of a-z, 0-9, '_' and '.'.")
        var username: String

        @Flag(help: "Make the user a park admin (may load parks over HTTP).")
        var admin = false

        @Option(help: "Display name (default: the username).")
        var displayName: String?

        @Flag(help: "If the user exists, set this password and role instead of failing; their sessions end.")
        var reset = false

        func validate() throws {
            do {
                _ = try AccountRules.username(self.username)
            } catch {
                throw ValidationError(error.description)
            }
        }

        func run() async throws {
            let password = try Self.readPassword()
            do {
                try AccountRules.password(password)
            } catch {
                // A bad password is not a misuse of the command: the reason alone, no usage line.
                throw CommandFailure(error.description)
            }
            let store = try await self.database.open()
            defer { try? store.close() }
            let accounts = Accounts(store: store, sessions: Sessions(store: store, policy: AccountPolicy()))
            let role: Role = self.admin ? .admin : .member
            do {
                let profile = try await accounts.register(username: self.username, password: password, displayName: self.displayName, role: role)
                print("Created \(profile.role.rawValue) \(profile.username) (id \(profile.id)).")
            } catch AccountError.usernameTaken(let name) where self.reset {
                let profile = try await accounts.reset(username: name, password: password, role: role)
                print("Reset \(profile.username) (id \(profile.id)): role \(profile.role.rawValue), new password, sessions ended.")
            } catch AccountError.usernameTaken(let name) {
                print("The username \(name) is taken; pass --reset to set its password and role.")
                throw ExitCode.failure
            }
        }

        /// One line of standard input; on a terminal, asked twice with echo off.
        static func readPassword() throws -> String {
            guard isatty(STDIN_FILENO) == 1 else {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw CommandFailure("no password on standard input")
                }
                return line
            }
            let first = try Self.prompt("Password: ")
            let second = try Self.prompt("Again: ")
            guard first == second else { throw ValidationError("the two passwords differ") }
            return first
        }

        private static func prompt(_ text: String) throws -> String {
            FileHandle.standardError.write(Data(text.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
            defer {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                FileHandle.standardError.write(Data("\n".utf8))
            }
            guard let line = readLine(strippingNewline: true) else { throw ValidationError("no password given") }
            return line
        }
    }
}

/// A command that failed for a reason its user can act on, printed as `Error: <reason>` without
/// the usage line that a misuse of the options earns.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
