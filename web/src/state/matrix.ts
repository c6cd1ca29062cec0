import { ROLES, type KnownCell, type KeyFact, type OperatorSnapshot, type Role } from "../api/types";

/** How a role knows a key fact, as kept with the case on the server; `not_asked` until an answer speaks to it. */
export type FactCell = KnownCell | "not_asked";

export type KnowledgeMatrix = Record<Role, Record<string, FactCell>>;

const CELLS: ReadonlySet<string> = new Set<KnownCell>(["own_memory", "board", "conflicting", "uncertain", "unknown"]);

export function knowledgeMatrix(keyFacts: KeyFact[], knowledge: OperatorSnapshot["knowledge"] | undefined): KnowledgeMatrix {
  const matrix = {} as KnowledgeMatrix;
  for (const role of ROLES) {
    matrix[role] = {};
    for (const fact of keyFacts) {
      const cell = knowledge?.[role]?.[fact.id];
      matrix[role][fact.id] = cell !== undefined && CELLS.has(cell) ? cell : "not_asked";
    }
  }
  return matrix;
}
