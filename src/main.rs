use clap::Parser;
use latkit::cli::Cli;
use latkit::error::Error;

fn main() {
    let cli = Cli::parse();
    let code = match latkit::commands::run(cli) {
        Ok(()) => 0,
        Err(Error::Interrupted) => Error::Interrupted.exit_code(),
        Err(e) => {
            latkit::error::say(&format!("latkit: {e}"));
            e.exit_code()
        }
    };
    std::process::exit(code);
}
