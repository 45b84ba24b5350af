use latkit::error::Error;

fn main() {
    let outcome = latkit::cli::command_line().and_then(latkit::commands::run);
    let code = match outcome {
        Ok(()) => 0,
        Err(Error::Interrupted) => Error::Interrupted.exit_code(),
        Err(e) => {
            latkit::error::say(&format!("latkit: {e}"));
            e.exit_code()
        }
    };
    std::process::exit(code);
}
