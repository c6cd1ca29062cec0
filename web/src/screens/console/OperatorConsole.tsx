import { useEffect, useMemo, useReducer, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { api, ApiError, streamUrls } from "../../api/client";
import { BOARD, type Card, type ResponderMode, type Role } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";
import { useLiveSnapshot } from "../../live/useLiveSnapshot";
import { boardCopiesBySource, citedCardIds, consoleReducer, initialConsoleState } from "../../state/consoleState";
import { buildCardIndex, deriveKnowledgeMatrix } from "../../state/matrix";
import { forgetCase, rememberCase } from "../../state/recentCases";
import { AnswerCard } from "./AnswerCard";
import { BulletinBoard } from "./BulletinBoard";
import { ConsoleHeader } from "./ConsoleHeader";
import { CrossExamination } from "./CrossExamination";
import { KnowledgeMatrix } from "./KnowledgeMatrix";
import { MemoryXray } from "./MemoryXray";
import { PrivateCards } from "./PrivateCards";
import { QuestionComposer } from "./QuestionComposer";
import { RoleRail } from "./RoleRail";
import { WhisperBox } from "./WhisperBox";

export function OperatorConsole() {
  const { caseId = "" } = useParams();
  return <CaseConsole key={caseId} caseId={caseId} />;
}

function CaseConsole({ caseId }: { caseId: string }) {
  const { t } = useI18n();
  const navigate = useNavigate();
  const [state, dispatch] = useReducer(consoleReducer, initialConsoleState);
  const [mode, setMode] = useState<ResponderMode | null>(null);
  const [selectedRole, setSelectedRole] = useState<Role>("detective");
  const [publishingCardId, setPublishingCardId] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { connection, missing, scheduleRefetch, discardPendingFetches } = useLiveSnapshot({
    load: () => api.getCase(caseId),
    streamUrl: streamUrls.operator(caseId),
    ended: state.erased,
    onSnapshot: (snapshot) => dispatch({ type: "snapshot-loaded", snapshot }),
    onEvent: (event) => dispatch({ type: "live-event", event }),
    onMissing: () => forgetCase(caseId),
  });

  useEffect(() => {
    if (connection !== "live") return;
    api.health().then(
      (health) => setMode(health.mode),
      () => undefined,
    );
  }, [connection]);

  const snapshot = state.snapshot;
  const scenarioTitle = snapshot?.scenario.title;
  const caseLanguage = snapshot?.case.language;
  useEffect(() => {
    if (scenarioTitle === undefined || caseLanguage === undefined) return;
    rememberCase({ id: caseId, title: scenarioTitle, language: caseLanguage, openedAt: new Date().toISOString() });
  }, [caseId, scenarioTitle, caseLanguage]);

  useEffect(() => {
    if (state.erased) forgetCase(caseId);
  }, [state.erased, caseId]);

  const cited = useMemo(() => citedCardIds(state.answer), [state.answer]);
  const matrix = useMemo(() => {
    if (snapshot === null) return null;
    const index = buildCardIndex(snapshot.spaces, state.tracedCards);
    return deriveKnowledgeMatrix(snapshot.scenario.key_facts, state.answerLog, index);
  }, [snapshot, state.tracedCards, state.answerLog]);

  if (missing || state.erased) {
    return (
      <main id="main" className="page-status">
        <p role="alert">{missing ? t("console.notFound", { id: caseId }) : t("console.erased")}</p>
        <Link className="button" to="/">
          {t("console.backToLobby")}
        </Link>
      </main>
    );
  }
  if (snapshot === null || matrix === null) return <p className="page-status">{t("common.loading")}</p>;

  async function reset() {
    try {
      const snapshot = await api.resetCase(caseId);
      discardPendingFetches();
      dispatch({ type: "case-reset", snapshot });
      setNotice(null);
    } catch (error) {
      setNotice(describeError(t, error));
    }
  }

  async function erase() {
    try {
      await api.eraseCase(caseId);
      forgetCase(caseId);
      navigate("/");
    } catch (error) {
      setNotice(describeError(t, error));
    }
  }

  async function whisper(text: string): Promise<Card> {
    const { card } = await api.whisper(caseId, selectedRole, text);
    scheduleRefetch();
    return card;
  }

  async function ask(question: string): Promise<void> {
    const role = selectedRole;
    const result = await api.interrogate(caseId, role, question);
    discardPendingFetches();
    dispatch({ type: "answer-received", role, question, result });
    scheduleRefetch();
  }

  async function crossExamine(roles: Role[], question: string) {
    const result = await api.crossExamine(caseId, roles, question);
    scheduleRefetch();
    return result;
  }

  async function publish(card: Card) {
    setPublishingCardId(card.id);
    setNotice(null);
    try {
      const { public_card, idempotent } = await api.publish(caseId, selectedRole, card.id);
      setNotice(t(idempotent ? "cards.alreadyPublished" : "cards.published", { id: public_card.id }));
      scheduleRefetch();
    } catch (error) {
      const pending = error instanceof ApiError && error.code === "PUBLICATION_PENDING";
      setNotice(pending ? t("cards.publishPending", { n: error.retryAfterSeconds ?? 1 }) : describeError(t, error));
    } finally {
      setPublishingCardId(null);
    }
  }

  return (
    <div className="console">
      <ConsoleHeader
        snapshot={snapshot}
        connection={connection}
        lastEvent={state.lastEvent}
        activity={state.activity}
        mode={mode}
        onReset={reset}
        onErase={erase}
        onSignOutError={(error) => setNotice(describeError(t, error))}
      />
      <main id="main" className="console__body">
        <RoleRail snapshot={snapshot} selected={selectedRole} onSelect={setSelectedRole} />
        <div className="console__work">
          <p className="notice" role="status" aria-live="polite">
            {notice}
          </p>
          <QuestionComposer role={selectedRole} presets={snapshot.scenario.preset_questions} ask={ask} />
          <AnswerCard answer={state.answer} />
          <MemoryXray trace={state.trace} />
          <CrossExamination presets={snapshot.scenario.preset_questions} crossExamine={crossExamine} />
          <PrivateCards
            role={selectedRole}
            cards={snapshot.spaces[selectedRole] ?? []}
            cited={cited}
            boardCopies={boardCopiesBySource(snapshot)}
            publishingCardId={publishingCardId}
            onPublish={publish}
          />
          <WhisperBox key={selectedRole} role={selectedRole} whisper={whisper} />
        </div>
        <aside className="console__side">
          <BulletinBoard cards={snapshot.spaces[BOARD] ?? []} cited={cited} />
          <KnowledgeMatrix keyFacts={snapshot.scenario.key_facts} matrix={matrix} />
        </aside>
      </main>
    </div>
  );
}
