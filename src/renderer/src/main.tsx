import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { electronBridge } from './api/client';
import { webSocketBridge } from './api/ws-bridge';
import './styles.css';

// Under Electron the preload installed the IPC bridge; in a browser, the page talks to `inferlab serve` over /rpc.
const bridge = electronBridge() ?? (window.location.protocol.startsWith('http') ? webSocketBridge() : null);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App bridge={bridge} />
  </StrictMode>,
);
