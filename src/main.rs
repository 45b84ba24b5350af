use latkit::error::Error;

fn main() {
    latkit::interrupt::report_oversized_writes();
    let env = latkit::commands::Env::system();
    let outcome =
        latkit::cli::command_line().and_then(|command| latkit::commands::run(command, &env));
    let code = match outcome {
        Ok(()) => 0,
        Err(Error::Interrupted) => Error::Interrupted.exit_code(),
        Err(e) => {
            // A secret in a failed command's words never reaches the terminal.
            env.console
                .say(&latkit::model::redact::in_text(&format!("latkit: {e}")));
            e.exit_code()
        }
    };
    std::process::exit(code);
}
