import { messages, type MessageKey, type UiLanguage } from "./strings";

export type MessageParams = Record<string, string | number>;
export type Translate = (key: MessageKey, params?: MessageParams) => string;

export function translate(language: UiLanguage, key: MessageKey, params: MessageParams = {}): string {
  const template = messages[language][key];
  return template.replace(/\{(\w+)\}/g, (placeholder, name: string) =>
    name in params ? String(params[name]) : placeholder,
  );
}

/** The `{name}` placeholders of a template, sorted, for comparing languages. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "").sort();
}

export function isUiLanguage(value: unknown): value is UiLanguage {
  return value === "en" || value === "zh";
}
