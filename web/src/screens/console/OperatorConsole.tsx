import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { api, ApiError, streamUrls } from "../../api/client";
import { BOARD, isDerivedCard, isRole, ROLES, type Card, type LiveEvent, type MemoryPolicy, type Role, type Space } from "../../api/types";
import { describeError } from "../../components/describeError";
import { useI18n } from "../../i18n/I18n";
import { TopicLabelsProvider } from "../../labels/labels";
import { useCaseRecord } from "../../live/useCaseRecord";
import { useLiveSnapshot } from "../../live/useLiveSnapshot";
import { openRow, recordRows } from "../../state/caseRecord";
import { boardCopiesBySource, citedCardIds, consoleReducer, initialConsoleState } from "../../state/consoleState";
import { knowledgeMatrix } from "../../state/matrix";
import { forgetCase, rememberCase } from "../../state/recentCases";
import { AnswerCard } from "./AnswerCard";
import { BulletinBoard } from "./BulletinBoard";
import { CaseTimeline, RecordEntryDialog } from "./CaseTimeline";
import { ConsoleHeader } from "./ConsoleHeader";
import { CrossExamination } from "./CrossExamination";
import { FindingsPanel } from "./FindingsPanel";
import { KnowledgeMatrix } from "./KnowledgeMatrix";
import { MemoryXray } from "./MemoryXray";
import { PolicyLog } from "./PolicyLog";
import { PrivateCards } from "./PrivateCards";
import { QuestionComposer } from "./QuestionComposer";
import { RoleRail } from "./RoleRail";
import { WhisperBox } from "./WhisperBox";

export function OperatorConsole() {
  const { caseId = "" } = useParams();
  return <CaseConsole key={caseId} caseId={caseId} />;
}

/** The selected role lives in the URL (`?role=informant`), so a reload or a shared link keeps it. */
function useSelectedRole(): [Role, (role: Role) => void] {
  const [params, setParams] = useSearchParams();
  const value = params.get("role");
  const role: Role = isRole(value) ? value : "detective";
  const select = (next: Role) =>
    setParams(
      (current) => {
        const updated = new URLSearchParams(current);
        updated.set("role", next);
        return updated;
      },
      { replace: true },
    );
  return [role, select];
}

function CaseConsole({ caseId }: { caseId: string }) {
  const { t } = useI18n();
  const navigate = useNavigate();
  const [state, dispatch] = useReducer(consoleReducer, initialConsoleState);
  const [selectedRole, selectRole] = useSelectedRole();
  const [publishingCardId, setPublishingCardId] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  /** The board copy published last: scrolled into view and highlighted until the next action. */
  const [freshCardId, setFreshCardId] = useState<string | null>(null);
  const [memoryPolicy, setMemoryPolicy] = useState<MemoryPolicy | null>(null);
  const [whisperAttempts, setWhisperAttempts] = useState(0);
  /** The presenter act: offered when the server has it on; asked only while the presenter's switch is on. */
  const [actsOffered, setActsOffered] = useState(false);
  const [actOn, setActOn] = useState(false);
  const noteRecordEvent = useRef<(event: LiveEvent) => void>(() => undefined);
  const { connection, missing, scheduleRefetch, discardPendingFetches } = useLiveSnapshot({
    load: () => api.getCase(caseId),
    streamUrl: streamUrls.operator(caseId),
    ended: state.erased,
    onSnapshot: (snapshot) => dispatch({ type: "snapshot-loaded", snapshot }),
    onEvent: (event) => {
      dispatch({ type: "live-event", event });
      noteRecordEvent.current(event); // an erased card may change older record entries
    },
    onMissing: () => forgetCase(caseId),
  });

  useEffect(() => {
    api.memoryPolicy().then(setMemoryPolicy, () => undefined); // without it the box uses the server's default type
    api.health().then((health) => setActsOffered(health.presenter_acts), () => undefined); // without it: no act
  }, []);

  const snapshot = state.snapshot;
  const { state: record, dispatch: dispatchRecord, loadOlder, noteEvent } = useCaseRecord(caseId, snapshot);
  noteRecordEvent.current = noteEvent;
  const scenarioTitle = snapshot?.scenario.title;
  const caseLanguage = snapshot?.case.language;
  useEffect(() => {
    if (scenarioTitle === undefined || caseLanguage === undefined) return;
    rememberCase({ id: caseId, title: scenarioTitle, language: caseLanguage, openedAt: new Date().toISOString() });
  }, [caseId, scenarioTitle, caseLanguage]);

  useEffect(() => {
    if (state.erased) forgetCase(caseId);
  }, [state.erased, caseId]);

  const answer = state.answers[selectedRole] ?? null;
  const cited = useMemo(() => citedCardIds(answer), [answer]);
  const matrix = useMemo(() => (snapshot === null ? null : knowledgeMatrix(snapshot.scenario.key_facts, snapshot.knowledge)), [snapshot]);
  const cardsById = useMemo(() => {
    const index = new Map<string, Card>();
    for (const cards of Object.values(snapshot?.spaces ?? {})) for (const card of cards ?? []) index.set(card.id, card);
    return index;
  }, [snapshot]);
  const cardCounts = useMemo(() => {
    const counts: Partial<Record<Space, number>> = {};
    for (const space of [...ROLES, BOARD] as Space[]) counts[space] = (snapshot?.spaces[space] ?? []).filter((card) => !isDerivedCard(card)).length;
    return counts;
  }, [snapshot]);

  const evaluateFindings = useCallback((claim?: string) => api.evaluateFindings(caseId, claim), [caseId]);
  const listFindings = useCallback(() => api.findings(caseId), [caseId]);

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

  /** Every new action starts clean: the last notice and the last highlight belong to the previous one. */
  function beginAction() {
    setNotice(null);
    setFreshCardId(null);
  }

  async function reset() {
    beginAction();
    try {
      const snapshot = await api.resetCase(caseId);
      discardPendingFetches();
      dispatch({ type: "case-reset", snapshot });
    } catch (error) {
      setNotice(describeError(t, error));
    }
  }

  async function erase() {
    beginAction();
    try {
      await api.eraseCase(caseId);
      forgetCase(caseId);
      navigate("/");
    } catch (error) {
      setNotice(describeError(t, error));
    }
  }

  async function whisper(text: string, memoryType?: string, key?: string, source?: string): Promise<Card> {
    beginAction();
    try {
      const { card } = await api.whisper(caseId, selectedRole, text, memoryType, key, source);
      scheduleRefetch();
      return card;
    } finally {
      setWhisperAttempts((n) => n + 1); // a refused whisper changes no version but is in the policy log
    }
  }

  async function ask(question: string): Promise<void> {
    beginAction();
    const role = selectedRole;
    const unfiltered = actsOffered && actOn;
    let result;
    try {
      result = unfiltered ? await api.unfilteredAct(caseId, role, question) : await api.interrogate(caseId, role, question);
    } catch (error) {
      if (error instanceof ApiError && error.code === "PRESENTER_ACTS_OFF") {
        setActsOffered(false); // turned off since this console loaded: the switch goes
        setActOn(false);
      }
      throw error;
    }
    discardPendingFetches();
    dispatch({ type: "answer-received", role, result });
    scheduleRefetch();
  }

  async function crossExamine(roles: Role[], question: string) {
    const result = await api.crossExamine(caseId, roles, question);
    scheduleRefetch();
    return result;
  }

  async function publish(card: Card) {
    beginAction();
    setPublishingCardId(card.id);
    try {
      const { public_card, idempotent } = await api.publish(caseId, selectedRole, card.id);
      setNotice(t(idempotent ? "cards.alreadyPublished" : "cards.published"));
      setFreshCardId(public_card.id);
      scheduleRefetch();
    } catch (error) {
      const pending = error instanceof ApiError && error.code === "PUBLICATION_PENDING";
      setNotice(pending ? t("cards.publishPending", { n: error.retryAfterSeconds ?? 1 }) : describeError(t, error));
    } finally {
      setPublishingCardId(null);
    }
  }

  async function promoteFinding(claim: string) {
    beginAction();
    const result = await api.promoteFinding(caseId, claim);
    setFreshCardId(result.card.id);
    scheduleRefetch();
    return result;
  }

  async function eraseCard(card: Card) {
    beginAction();
    try {
      await api.deleteCard(caseId, card.id);
      setNotice(t("cards.erased"));
      scheduleRefetch();
    } catch (error) {
      setNotice(describeError(t, error));
    }
  }

  function select(role: Role) {
    beginAction();
    selectRole(role);
  }

  return (
    <TopicLabelsProvider labels={snapshot.scenario.topic_labels ?? {}}>
      <div className="console">
        <ConsoleHeader
          snapshot={snapshot}
          connection={connection}
          onReset={reset}
          onErase={erase}
          onSignOutError={(error) => setNotice(describeError(t, error))}
        />
        <main id="main" className="console__body">
          <div className="console__column console__roles">
            <RoleRail snapshot={snapshot} selected={selectedRole} onSelect={select} />
            <PrivateCards
              role={selectedRole}
              cards={snapshot.spaces[selectedRole] ?? []}
              cited={cited}
              boardCopies={boardCopiesBySource(snapshot)}
              publishingCardId={publishingCardId}
              onPublish={publish}
              onErase={eraseCard}
            />
            <WhisperBox key={selectedRole} role={selectedRole} whisper={whisper} policy={memoryPolicy} />
          </div>
          <div className="console__column console__work">
            <p className="notice" role="status" aria-live="polite" data-testid="notice">
              {notice}
            </p>
            <QuestionComposer
              role={selectedRole}
              presets={snapshot.scenario.preset_questions}
              ask={ask}
              act={actsOffered ? { on: actOn, onChange: setActOn } : undefined}
            />
            <AnswerCard answer={answer} cards={cardsById} />
            <MemoryXray trace={answer?.trace ?? null} role={selectedRole} cardCounts={cardCounts} />
            <CrossExamination presets={snapshot.scenario.preset_questions} crossExamine={crossExamine} />
            <FindingsPanel
              claims={snapshot.scenario.claims ?? []}
              refreshKey={String(snapshot.case.version)}
              evaluate={evaluateFindings}
              promote={promoteFinding}
              list={listFindings}
            />
          </div>
          <aside className="console__column console__side">
            <BulletinBoard cards={snapshot.spaces[BOARD] ?? []} cited={cited} freshCardId={freshCardId} />
            <KnowledgeMatrix keyFacts={snapshot.scenario.key_facts} matrix={matrix} />
            <CaseTimeline
              caseId={caseId}
              rows={recordRows(record)}
              openId={record.openId}
              onOpen={(id) => dispatchRecord({ type: "entry-opened", id })}
              hasMore={record.next !== null}
              loadingOlder={record.loadingOlder}
              onLoadMore={loadOlder}
            />
            <PolicyLog caseId={caseId} refreshKey={`${snapshot.case.version}:${whisperAttempts}`} />
          </aside>
        </main>
        <RecordEntryDialog row={openRow(record)} cardCounts={cardCounts} onClose={() => dispatchRecord({ type: "entry-closed" })} />
      </div>
    </TopicLabelsProvider>
  );
}
