// Entry point: the login page at /login, the control panel everywhere else.
import { render } from 'preact';
import './styles.css';
import 'uplot/dist/uPlot.min.css';
import { LoginPage } from './components/Login.tsx';
import { App } from './components/App.tsx';

const root = document.getElementById('app')!;
const onLogin = location.pathname.replace(/\/+$/, '') === '/login';
render(onLogin ? <LoginPage /> : <App />, root);
