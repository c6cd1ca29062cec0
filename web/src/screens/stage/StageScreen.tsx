import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { useParams } from "react-router";
import { api, ApiError, streamUrls } from "../../api/client";
import { ConnectionDot } from "../../components/ConnectionDot";
import { FixedLanguage, useI18n } from "../../i18n/I18n";
import type { ConnectionState } from "../../live/resumableStream";
import { useDebounced } from "../../live/useDebounced";
import { useLiveStream } from "../../live/useLiveStream";
import { initialStageState, stageReducer, type StageState } from "../../state/stageState";
import { RetrievalSentence } from "./RetrievalSentence";
import { RoleTiles } from "./RoleTiles";
import { StageBoard } from "./StageBoard";

const REFETCH_DEBOUNCE_MS = 120;

export function StageScreen() {
  const { caseId = "" } = useParams();
  return <CaseStage key={caseId} caseId={caseId} />;
}

function CaseStage({ caseId }: { caseId: string }) {
  const [state, dispatch] = useReducer(stageReducer, initialStageState);
  const [missing, setMissing] = useState(false);
  const latestRequest = useRef(0);

  const refetch = useCallback(async () => {
    const request = ++latestRequest.current;
    try {
      const snapshot = await api.stage(caseId);
      if (request === latestRequest.current) dispatch({ type: "snapshot-loaded", snapshot });
    } catch (error) {
      if (error instanceof ApiError && error.code === "CASE_NOT_FOUND") setMissing(true);
    }
  }, [caseId]);
  const scheduleRefetch = useDebounced(() => void refetch(), REFETCH_DEBOUNCE_MS);

  // An ended case has no stream to resume: stop, instead of retrying (and showing "reconnecting") for ever.
  const connection = useLiveStream(missing || state.erased ? null : streamUrls.stage(caseId), {
    onEvent: (event) => {
      dispatch({ type: "live-event", event });
      scheduleRefetch();
    },
    onResync: scheduleRefetch,
  });

  useEffect(() => {
    void refetch();
  }, [refetch]);

  const language = state.snapshot?.case.language;
  const view = <StageView caseId={caseId} state={state} missing={missing} connection={connection} />;
  return language === undefined ? view : <FixedLanguage language={language}>{view}</FixedLanguage>;
}

interface StageViewProps {
  caseId: string;
  state: StageState;
  missing: boolean;
  connection: ConnectionState;
}

function StageView({ caseId, state, missing, connection }: StageViewProps) {
  const { t } = useI18n();
  const { snapshot } = state;
  const ended = missing || state.erased;
  return (
    <div className="stage">
      <div key={state.activity} className={state.activity > 0 ? "stage__pulse stage__pulse--on" : "stage__pulse"} aria-hidden="true" />
      <header className="stage__header">
        <h1 className="stage__title">{t("app.title")}</h1>
        <span className="stage__case">{t("stage.caseLabel", { id: caseId })}</span>
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
            <StageBoard cards={snapshot.bulletin_board} />
          </>
        )}
      </main>
    </div>
  );
}
