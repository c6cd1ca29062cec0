import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, expect, type APIRequestContext } from "@playwright/test";

const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_ROOT = resolve(WEB_DIR, "..");
const BUREAU_BIN = join(REPO_ROOT, ".venv", "bin", "bureau");
const LOG_DIR = join(WEB_DIR, "test-results", "server-logs");
const START_DEADLINE_MS = 120_000;

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

async function waitForHealth(baseURL: string, process: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (process.exitCode !== null) throw new Error(`bureau serve exited with ${process.exitCode}; see ${LOG_DIR}`);
    try {
      const response = await fetch(`${baseURL}/api/health`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((wake) => setTimeout(wake, 250));
  }
  throw new Error(`bureau serve did not answer /api/health within ${START_DEADLINE_MS} ms`);
}

/** A data directory's vault: its sibling `<name>-vault`, never inside it (the server refuses that: a backup of the
 * data would carry the keys). tests/live_server.py places it the same way. */
export function vaultBeside(dataDir: string): string {
  return `${dataDir}-vault`;
}

/** One `bureau serve` process with its own port, data directory and vault; restartable on the same ones. */
export class BureauServer {
  readonly baseURL: string;
  readonly vaultDir: string;
  private process: ChildProcess | null = null;
  private starts = 0;

  constructor(
    readonly port: number,
    readonly dataDir: string,
    private readonly env: Record<string, string>,
    private readonly name: string,
  ) {
    this.baseURL = `http://127.0.0.1:${port}`;
    this.vaultDir = vaultBeside(dataDir);
  }

  async start(): Promise<void> {
    mkdirSync(LOG_DIR, { recursive: true });
    this.starts += 1;
    const log = createWriteStream(join(LOG_DIR, `${this.name}-${this.starts}.log`));
    const args = ["serve", "--port", String(this.port), "--data-dir", this.dataDir, "--vault-dir", this.vaultDir];
    const child = spawn(BUREAU_BIN, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, BUREAU_EMBEDDER: "local", ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.process = child;
    await waitForHealth(this.baseURL, child);
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Simulates a crash: SIGKILL, no graceful shutdown. */
  async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill("SIGKILL");
    await exited;
  }
}

export async function launchBureau(name: string, env: Record<string, string> = {}): Promise<BureauServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `bureau-e2e-${name}-`));
  const server = new BureauServer(await freePort(), dataDir, env, name);
  await server.start();
  return server;
}

export async function shutDownBureau(server: BureauServer): Promise<void> {
  await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
  rmSync(server.vaultDir, { recursive: true, force: true });
}

interface BureauFixtures {
  bureauEnv: Record<string, string>;
  bureau: BureauServer;
}

/** Each worker (= each spec file, with workers: 1) gets its own server; `test.use({ bureauEnv })` configures it. */
export const test = base.extend<{ caseFor: (scenarioId: string, language: "en" | "zh") => Promise<string> }, BureauFixtures>({
  bureauEnv: [{}, { option: true, scope: "worker" }],
  bureau: [
    async ({ bureauEnv }, use, workerInfo) => {
      const server = await launchBureau(`w${workerInfo.workerIndex}`, bureauEnv);
      await use(server);
      await shutDownBureau(server);
    },
    { scope: "worker", timeout: START_DEADLINE_MS + 30_000 },
  ],
  baseURL: async ({ bureau }, use) => use(bureau.baseURL),
  caseFor: async ({ request }, use) => {
    await use((scenarioId, language) => createCase(request, scenarioId, language));
  },
});

export async function createCase(request: APIRequestContext, scenarioId: string, language: "en" | "zh"): Promise<string> {
  const response = await request.post("/api/cases", { data: { scenario_id: scenarioId, language } });
  expect(response.status()).toBe(201);
  const snapshot = (await response.json()) as { case: { id: string } };
  return snapshot.case.id;
}

export { expect };
