// @vitest-environment node
/// <reference types="node" />
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the generated client", () => {
  it("schema.ts is what openapi-typescript makes of the committed OpenAPI document (run `make client`)", () => {
    // vitest runs from web/, where package.json defines check:api
    const run = spawnSync("npm", ["run", "--silent", "check:api"], { cwd: process.cwd(), encoding: "utf8" });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  }, 60_000);
});
