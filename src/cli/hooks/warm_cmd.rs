//! `rein hooks warm`: starts the interpreters a session would keep waiting for the warm hooks
//! of these settings, reports what each costs in memory, and ends them.

use super::*;

pub(super) fn warm_cmd(
    ctx: Context,
    as_json: bool,
    runtime: &tokio::runtime::Runtime,
) -> Result<i32, CliError> {
    let sim = simulate(
        &FiringArgs {
            event: "SessionStart".to_string(),
            tool: None,
            input: None,
            matcher_value: None,
        },
        &ctx.project_dir,
    )?;
    let env = environment(&ctx, &sim);
    let dispatcher = Dispatcher::new(ctx.settings.handlers.clone(), env);
    let costs = runtime.block_on(async {
        dispatcher.warm_up();
        crate::hooks::warm::settle().await;
        // The server forks the pair for its first call right after it is ready.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        crate::hooks::warm::waiting_memory()
    });
    let cap = crate::hooks::warm::max_waiting();
    let mib = |kib: u64| kib as f64 / 1024.0;
    if as_json {
        let list: Vec<Value> = costs
            .iter()
            .map(|c| {
                json!({
                    "command": c.command,
                    "interpreter": c.interpreter.name(),
                    "processes": c.processes,
                    "rss_kib": c.rss_kib,
                    "pss_kib": c.pss_kib,
                })
            })
            .collect();
        let total: u64 = costs.iter().map(|c| c.pss_kib).sum();
        println!(
            "{}",
            json!({"waiting": list, "pss_kib_total": total, "max_waiting": cap})
        );
        return Ok(EXIT_OK);
    }
    if costs.is_empty() {
        println!("No hook runs warm here: no interpreter would wait.");
        return Ok(EXIT_OK);
    }
    println!("Interpreters a session keeps waiting (REIN_WARM_HOOKS_MAX={cap}):");
    for c in &costs {
        println!(
            "  {:<6} {:>6.1} MiB  ({} processes, {:.1} MiB resident counting shared pages in each)  {}",
            c.interpreter.name(),
            mib(c.pss_kib),
            c.processes,
            mib(c.rss_kib),
            c.command
        );
    }
    let total: u64 = costs.iter().map(|c| c.pss_kib).sum();
    println!("  total  {:>6.1} MiB (proportional set size)", mib(total));
    Ok(EXIT_OK)
}
