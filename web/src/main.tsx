import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
// A CJK font shipped with the app: a projector machine without Chinese system fonts still shows Chinese.
// The browser downloads only the unicode-range slices a page actually uses.
import "@fontsource/noto-sans-sc/400.css";
import "@fontsource/noto-sans-sc/700.css";
import "./styles.css";

const root = document.getElementById("root");
if (root === null) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
