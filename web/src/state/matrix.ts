import { BOARD, ROLES, type Card, type KeyFact, type Role, type Space } from "../api/types";
import type { AnswerLog, CardRef, RoleAnswer } from "./consoleState";

/** How a role knows a key fact, judged from its answers so far (the newest that speaks to the fact wins). */
export type FactCell = "own_memory" | "board" | "uncertain" | "unknown" | "not_asked";

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

/** What one answer says about a fact: known (from where), uncertain or unknown (only when it answered the
 * fact's own question), or nothing at all (an answer to some other question proves nothing about this fact).
 * An uncertain answer quotes its closest card, but is never counted as knowing. */
function cellFromAnswer(role: Role, fact: KeyFact, answer: RoleAnswer, index: Map<string, CardRef>): FactCell | null {
  const ownQuestion = Boolean(fact.question && answer.question?.trim() === fact.question.trim());
  if (answer.certainty === "uncertain") return ownQuestion ? "uncertain" : null;
  const onTopic = answer.evidence
    .map((cardId) => index.get(cardId))
    .filter((ref): ref is CardRef => ref !== undefined && ref.topic === fact.topic);
  if (onTopic.some((ref) => ref.space === role)) return "own_memory";
  if (onTopic.some((ref) => ref.space === BOARD)) return "board";
  if (ownQuestion) return "unknown";
  return null;
}

export function deriveFactCell(role: Role, fact: KeyFact, answers: RoleAnswer[] | undefined, index: Map<string, CardRef>): FactCell {
  let cell: FactCell = "not_asked";
  for (const answer of answers ?? []) cell = cellFromAnswer(role, fact, answer, index) ?? cell;
  return cell;
}

export function deriveKnowledgeMatrix(
  keyFacts: KeyFact[],
  answerLog: AnswerLog,
  index: Map<string, CardRef>,
): KnowledgeMatrix {
  const matrix = {} as KnowledgeMatrix;
  for (const role of ROLES) {
    matrix[role] = {};
    for (const fact of keyFacts) matrix[role][fact.id] = deriveFactCell(role, fact, answerLog[role], index);
  }
  return matrix;
}
