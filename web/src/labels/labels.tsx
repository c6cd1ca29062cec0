import { createContext, useCallback, useContext, type ReactNode } from "react";
import { BOARD, isRole, type Space, type TopicLabels } from "../api/types";
import { useI18n } from "../i18n/I18n";
import type { UiLanguage } from "../i18n/strings";
import type { Translate } from "../i18n/translate";

/** Topics the system writes itself (not from scenario data): their labels are UI strings. */
const SYSTEM_TOPICS = { session: "topic.session", whisper: "topic.whisper", finding: "topic.finding" } as const;

/** "safe_combination" → "safe combination": the last resort when neither the scenario nor the UI has a label. */
export function humanizeTopic(topic: string): string {
  return topic.replace(/_+/g, " ").trim();
}

export function topicLabel(labels: TopicLabels, topic: string, language: UiLanguage, t: Translate): string {
  const fromScenario = labels[topic];
  if (fromScenario) return fromScenario[language] ?? fromScenario.en ?? humanizeTopic(topic);
  if (topic in SYSTEM_TOPICS) return t(SYSTEM_TOPICS[topic as keyof typeof SYSTEM_TOPICS]);
  return humanizeTopic(topic);
}

export function spaceName(t: Translate, space: Space): string {
  return space === BOARD ? t("space.bulletin_board") : isRole(space) ? t(`role.${space}`) : space;
}

/** Several spaces by name, as a list: "Detective, Bulletin board" (the keys a request held). */
export function spaceList(t: Translate, spaces: readonly Space[]): string {
  return spaces.map((space) => spaceName(t, space)).join(t("list.joiner"));
}

/** A lane or a search scope: "Detective's memory", "Bulletin board". */
export function spaceMemoryName(t: Translate, space: Space): string {
  return space === BOARD ? t("space.bulletin_board") : t("space.memoryOf", { role: spaceName(t, space) });
}

const TopicLabelsContext = createContext<TopicLabels>({});

export function TopicLabelsProvider({ labels, children }: { labels: TopicLabels; children: ReactNode }) {
  return <TopicLabelsContext.Provider value={labels}>{children}</TopicLabelsContext.Provider>;
}

/** The label of a topic in the interface language, from the scenario data. */
export function useTopicLabel(): (topic: string) => string {
  const labels = useContext(TopicLabelsContext);
  const { language, t } = useI18n();
  return useCallback((topic: string) => topicLabel(labels, topic, language, t), [labels, language, t]);
}

/** A card's human name: "Informant · safe combination" (ids only in a details view). */
export function useCardLabel(): (card: { space: Space; topic: string }) => string {
  const label = useTopicLabel();
  const { t } = useI18n();
  return useCallback((card) => t("card.label", { space: spaceName(t, card.space), topic: label(card.topic) }), [label, t]);
}
