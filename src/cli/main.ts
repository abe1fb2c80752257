#!/usr/bin/env bun
// The orq binary's entry: parses the command line with commander and hands
// `serve` to serve.ts. Command-line and config errors print one line and exit 2.

import { Command, CommanderError, Option } from "commander";
import { existsSync, readFileSync } from "node:fs";
import packageJson from "../../package.json" with { type: "json" };
import { ConfigError, defaultConfigPath, envName, flagName, resolveConfig, settings } from "./config.ts";
import { runServe } from "./serve.ts";

export const configErrorExitCode = 2;

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
  for (const setting of settings) {
    const placeholder = setting.kind === "int" ? "<n>" : setting.kind === "choice" ? `<${setting.choices!.join("|")}>` : "<value>";
    serve.addOption(
      new Option(`${flagName(setting.key)} ${placeholder}`, `${setting.description} (default ${setting.defaultValue}; env ${envName(setting.key)})`),
    );
  }
  serve.addOption(new Option("--config <path>", `JSON config file (default ${defaultConfigPath} if present; env ORQ_CONFIG)`));
  serve.action(async (flags: Record<string, string | undefined>) => {
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
    await runServe(config, packageJson.version);
  });
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
