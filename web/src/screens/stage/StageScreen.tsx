import { useEffect, useReducer, useState } from "react";
import { useParams } from "react-router";
import { api, ApiError, streamUrls } from "../../api/client";
import { ConnectionDot } from "../../components/ConnectionDot";
import { FixedLanguage, useI18n } from "../../i18n/I18n";
import type { ConnectionState } from "../../live/resumableStream";
import { useLiveSnapshot } from "../../live/useLiveSnapshot";
import { initialStageState, stageReducer, type StageState } from "../../state/stageState";
import { ConclusionLine } from "./ConclusionLine";
import { RetrievalSentence } from "./RetrievalSentence";
import { RoleTiles } from "./RoleTiles";
import { StageBoard } from "./StageBoard";

export function StageScreen() {
  const { caseId = "" } = useParams();
  return <CaseStage key={caseId} caseId={caseId} />;
}

/** How often a following stage asks whether a newer case has started. */
const FOLLOW_POLL_MS = 4_000;

/** `/stage/latest`: the stage of the newest active case, switching by itself when the operator starts another. */
export function FollowingStage() {
  const { t } = useI18n();
  const [caseId, setCaseId] = useState<string | null>(null);
  const [noCase, setNoCase] = useState(false);
  useEffect(() => {
    let stopped = false;
    const look = () =>
      api.latestCase().then(
        ({ case_id }) => {
          if (stopped) return;
          setNoCase(false);
          setCaseId(case_id);
        },
        (error: unknown) => {
          if (!stopped && error instanceof ApiError && error.code === "CASE_NOT_FOUND") setNoCase(true);
        },
      );
    void look();
    const timer = window.setInterval(look, FOLLOW_POLL_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
  }, []);
  if (caseId !== null && !noCase) return <CaseStage key={caseId} caseId={caseId} following />;
  return (
    <div className="stage">
      <main id="main" className="stage__body">
        <p className="stage__waiting" data-testid="stage-no-case">
          {noCase ? t("stage.noCase") : t("common.loading")}
        </p>
      </main>
    </div>
  );
}

function CaseStage({ caseId, following = false }: { caseId: string; following?: boolean }) {
  const [state, dispatch] = useReducer(stageReducer, initialStageState);
  const { connection, missing } = useLiveSnapshot({
    load: () => api.stage(caseId),
    streamUrl: streamUrls.stage(caseId),
    ended: state.erased,
    onSnapshot: (snapshot) => dispatch({ type: "snapshot-loaded", snapshot }),
    onEvent: (event) => dispatch({ type: "live-event", event }),
  });

  const language = state.snapshot?.case.language;
  const view = <StageView caseId={caseId} state={state} missing={missing} connection={connection} following={following} />;
  return language === undefined ? view : <FixedLanguage language={language}>{view}</FixedLanguage>;
}

interface StageViewProps {
  caseId: string;
  state: StageState;
  missing: boolean;
  connection: ConnectionState;
  following: boolean;
}

function StageView({ caseId, state, missing, connection, following }: StageViewProps) {
  const { t } = useI18n();
  const { snapshot } = state;
  const ended = missing || state.erased;
  return (
    <div className="stage">
      <div key={state.activity} className={state.activity > 0 ? "stage__pulse stage__pulse--on" : "stage__pulse"} aria-hidden="true" />
      <header className="stage__header">
        <h1 className="stage__title">{t("app.title")}</h1>
        <span className="stage__case" data-testid="stage-case" data-case-id={caseId}>
          {following ? t("stage.following") : t("stage.caseLabel", { id: caseId })}
        </span>
        <ConnectionDot state={connection} />
      </header>
      <main id="main" className="stage__body">
        {ended && (
          <p className="stage__ended" role="alert">
            {missing ? t("stage.notFound", { id: caseId }) : t("stage.ended")}
          </p>
        )}
        {!ended && snapshot === null && <p className="stage__waiting">{t("common.loading")}</p>}
        {!ended && snapshot !== null && (
          <>
            <RoleTiles counts={snapshot.counts} activeRole={snapshot.last_retrieval?.role ?? null} />
            <RetrievalSentence retrieval={snapshot.last_retrieval} />
            <ConclusionLine conclusion={snapshot.last_conclusion ?? null} />
            {state.findingWithdrawn && (
              <p className="stage__withdrawn" data-testid="stage-finding-withdrawn">
                {t("stage.withdrawn")}
              </p>
            )}
            <StageBoard cards={snapshot.bulletin_board} />
          </>
        )}
      </main>
    </div>
  );
}
