use std::process::ExitCode;

fn main() -> ExitCode {
    match b4_agent::cli::main() {
        Ok(code) => code,
        Err(e) => {
            // One line with the whole context chain: "workspace x: cannot read ...".
            eprintln!("error: {}", b4_agent::cli::error_line(&e));
            ExitCode::from(2)
        }
    }
}
