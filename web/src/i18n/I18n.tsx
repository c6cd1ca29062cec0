import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type { UiLanguage } from "./strings";
import { isUiLanguage, translate, type Translate } from "./translate";

interface I18nValue {
  language: UiLanguage;
  setLanguage: (language: UiLanguage) => void;
  t: Translate;
}

const STORAGE_KEY = "bureau.uiLanguage";

const I18nContext = createContext<I18nValue | null>(null);

function storedLanguage(): UiLanguage {
  const stored = localStorage.getItem(STORAGE_KEY);
  return isUiLanguage(stored) ? stored : "en";
}

function useI18nValue(language: UiLanguage, setLanguage: (language: UiLanguage) => void): I18nValue {
  const t = useCallback<Translate>((key, params) => translate(language, key, params), [language]);
  useEffect(() => {
    document.documentElement.lang = language === "zh" ? "zh-CN" : "en";
  }, [language]);
  return useMemo(() => ({ language, setLanguage, t }), [language, setLanguage, t]);
}

/** The operator's chosen interface language, remembered in localStorage. */
export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<UiLanguage>(storedLanguage);
  const setLanguage = useCallback((next: UiLanguage) => {
    localStorage.setItem(STORAGE_KEY, next);
    setLanguageState(next);
  }, []);
  const value = useI18nValue(language, setLanguage);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

const ignoreLanguageChange = () => undefined;

/** A subtree pinned to one language (the stage follows its case's language, not the operator's choice). */
export function FixedLanguage({ language, children }: { language: UiLanguage; children: ReactNode }) {
  const value = useI18nValue(language, ignoreLanguageChange);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18nValue {
  const value = useContext(I18nContext);
  if (value === null) throw new Error("useI18n needs an I18nProvider");
  return value;
}
