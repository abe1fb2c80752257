#!/usr/bin/env bun
// The orq binary's entry: parses the command line with commander, hands
// `serve` to serve.ts and each client command (enqueue, dequeue, ...) to its
// file under commands/. Command-line and config errors exit 2.

import { Command, CommanderError, Option } from "commander";
import { existsSync, readFileSync } from "node:fs";
import packageJson from "../../package.json" with { type: "json" };
import { ensureAllocatorEnv } from "./allocator-env.ts";
import { ConfigError, defaultConfigPath, envName, flagName, resolveConfig, settings } from "./config.ts";
import { addAckCommand } from "./commands/ack.ts";
import { addWaitCommand } from "./commands/wait.ts";
import { addCancelCommand } from "./commands/cancel.ts";
import { addDeadCommand } from "./commands/dead.ts";
import { addDequeueCommand } from "./commands/dequeue.ts";
import { addEnqueueCommand } from "./commands/enqueue.ts";
import { addExplainCommand } from "./commands/explain.ts";
import { addExtendCommand } from "./commands/extend.ts";
import { addGetCommand } from "./commands/get.ts";
import { addGroupsCommand } from "./commands/groups.ts";
import { addListCommand } from "./commands/list.ts";
import { addNackCommand } from "./commands/nack.ts";
import { addPauseCommand } from "./commands/pause.ts";
import { addPingCommand } from "./commands/ping.ts";
import { addPoliciesCommand } from "./commands/policies.ts";
import { addPolicyCommand } from "./commands/policy.ts";
import { addRedriveCommand } from "./commands/redrive.ts";
import { addResumeCommand } from "./commands/resume.ts";
import { addStatsCommand } from "./commands/stats.ts";
import { addTopicsCommand } from "./commands/topics.ts";

const configErrorExitCode = 2;

/**
 * One option per setting, and for a renamed one a hidden option under each
 * former spelling (config.ts reads it, with a warning at start).
 */
function addSettingOptions(serve: Command): void {
  for (const setting of settings) {
    const placeholder =
      setting.kind === "int"
        ? " <n>"
        : setting.kind === "portOrOff"
          ? " <port|off>"
          : setting.kind === "choice"
            ? ` <${setting.choices!.join("|")}>`
            : setting.kind === "flag"
              ? ""
              : " <value>";
    serve.addOption(
      new Option(`${flagName(setting.key)}${placeholder}`, `${setting.description} (default ${setting.defaultValue}; env ${envName(setting.key)})`),
    );
    for (const former of setting.formerKeys ?? []) {
      serve.addOption(new Option(`${flagName(former)}${placeholder}`, `former name of ${flagName(setting.key)}`).hideHelp());
    }
  }
}

function buildProgram(): Command {
  const program = new Command("orq")
    .description("orq: a durable priority-queue and job-matching server")
    .version(packageJson.version)
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  const serve = program
    .command("serve")
    .description("run the server (flags > ORQ_* environment > config file > defaults)")
    .exitOverride();
  addSettingOptions(serve);
  serve.addOption(new Option("--config <path>", `config file, JSON or (*.toml) TOML (default ${defaultConfigPath} if present; env ORQ_CONFIG)`));
  serve.action(async (flags: Record<string, string | undefined>) => {
    // The allocator's settings first, before anything is read or opened: this
    // returns only if they are already in place (or cannot be put there);
    // else the process starts over with them, same PID (allocator-env.ts).
    ensureAllocatorEnv();
    let config;
    try {
      config = resolveConfig({
        flags,
        env: process.env,
        readFile: (path) => (existsSync(path) ? readFileSync(path, "utf8") : null),
      });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`orq: ${error.message}\n`);
      process.exit(configErrorExitCode);
    }
    // Loaded only for `serve`: the client commands then start without loading
    // LMDB and its native addon (about 100 ms less per command).
    const { runServe } = await import("./serve.ts");
    await runServe(config, packageJson.version);
  });
  // Client commands, in the order a newcomer meets them.
  for (const add of [
    addPingCommand,
    addEnqueueCommand,
    addDequeueCommand,
    addAckCommand,
    addNackCommand,
    addExtendCommand,
    addGetCommand,
    addWaitCommand,
    addCancelCommand,
    addTopicsCommand,
    addListCommand,
    addPauseCommand,
    addResumeCommand,
    addGroupsCommand,
    addPolicyCommand,
    addPoliciesCommand,
    addExplainCommand,
    addDeadCommand,
    addRedriveCommand,
    addStatsCommand,
  ]) {
    add(program);
  }
  program.addHelpText(
    "after",
    "\nClient commands take --server HOST:PORT (env ORQ_SERVER, default 127.0.0.1:7420), --ns (env ORQ_NS,\n" +
      "default \"default\"), --token (env ORQ_TOKEN) and --json. Exit codes: 0 ok, 1 error (printed as\n" +
      "`error CODE: message`), 2 bad usage, 3 done but some receipts stale or ids missing.\n",
  );
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const helpOrVersion = error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help";
      process.exit(helpOrVersion ? 0 : configErrorExitCode);
    }
    throw error;
  }
}

await main(process.argv);
