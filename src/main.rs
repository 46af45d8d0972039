fn main() -> std::process::ExitCode {
    skyplan::cli::main()
}
