import './open-view-early';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { webSocketBridge } from './api/ws-bridge';
import './styles.css';

// In a browser and in the desktop window alike, the page talks to the local service (`inferlab serve`) over /rpc.
const bridge = window.location.protocol.startsWith('http') ? webSocketBridge() : null;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App bridge={bridge} />
  </StrictMode>,
);
