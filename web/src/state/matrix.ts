import { BOARD, ROLES, type Card, type KeyFact, type Role, type Space } from "../api/types";
import type { CardRef, RoleAnswer } from "./consoleState";

/** How a role knows a key fact, judged only from its last answer. */
export type FactCell = "own_memory" | "board" | "unknown" | "not_asked";

export type KnowledgeMatrix = Record<Role, Record<string, FactCell>>;

export function buildCardIndex(
  spaces: Partial<Record<Space, Card[]>>,
  tracedCards: Record<string, CardRef>,
): Map<string, CardRef> {
  const index = new Map<string, CardRef>(Object.entries(tracedCards));
  for (const cards of Object.values(spaces)) {
    for (const card of cards ?? []) index.set(card.id, { space: card.space, topic: card.topic });
  }
  return index;
}

export function deriveFactCell(role: Role, fact: KeyFact, answer: RoleAnswer | undefined, index: Map<string, CardRef>): FactCell {
  if (answer === undefined) return "not_asked";
  const onTopic = answer.evidence
    .map((cardId) => index.get(cardId))
    .filter((ref): ref is CardRef => ref !== undefined && ref.topic === fact.topic);
  if (onTopic.some((ref) => ref.space === role)) return "own_memory";
  if (onTopic.some((ref) => ref.space === BOARD)) return "board";
  return "unknown";
}

export function deriveKnowledgeMatrix(
  keyFacts: KeyFact[],
  answersByRole: Partial<Record<Role, RoleAnswer>>,
  index: Map<string, CardRef>,
): KnowledgeMatrix {
  const matrix = {} as KnowledgeMatrix;
  for (const role of ROLES) {
    matrix[role] = {};
    for (const fact of keyFacts) matrix[role][fact.id] = deriveFactCell(role, fact, answersByRole[role], index);
  }
  return matrix;
}
